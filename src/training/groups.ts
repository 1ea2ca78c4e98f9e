// Moved to src/trajectory/group-wire.ts (serializing a group belongs beside
// its shape); kept for the imports that name this path.
export {
  type GroupInput,
  groupPath,
  prepareGroup,
  prepareGroups,
  rewardSignalOf,
  toWireGroups,
} from "../trajectory/group-wire.js";
