// What train and log send: the groups' bytes, prepared once and checked
// (validateGroup's check as train and log run it) before anything is sent.
import {
  checkGroups,
  type GroupInput,
  PreparedGroup,
  prepareGroup,
  prepareGroups,
  refuseUntrainableBytes,
  rewardSignalOf,
  type ValidateOptions,
} from "../trajectory/index.js";
import { InvalidTrainingOptionsError } from "../util/training-options-error.js";
import type { TrajectoryGroupWire } from "../wire/index.js";

/** The check `train` and `log` take (`TrainableModel.GroupCheck`), or none given. */
type GroupCheck = ValidateOptions | ValidateOptions.ValidationMode | false | undefined;

/**
 * What `train` sends, with each group's reward signal: groups the shipper
 * prepared as the bytes they already are (checked when the shipper took
 * them); others written and checked once here, and those bytes.
 */
export async function checkedForTrain(
  groups: readonly GroupInput[],
  validate: GroupCheck,
  refuseUntrainable: boolean,
): Promise<{
  prepared: (readonly Uint8Array[])[];
  signals: (boolean | undefined)[];
  /** The groups the bytes were written from (or prepared as), in the same order. */
  sources: readonly unknown[];
}> {
  const prepared = allPrepared(groups);
  if (prepared) {
    if (validate === undefined && refuseUntrainable) refuseUntrainableBytes(prepared, "train");
    return { prepared, signals: groups.map(rewardSignalOf), sources: groups };
  }
  const written = await prepareGroups(groups, "train");
  requireTrainableGroups(groups as TrajectoryGroupWire[]);
  const kept = checkGroups(groups as TrajectoryGroupWire[], validate, "train", {
    refuseUntrainable,
  }).groups;
  return {
    prepared: await keptChunks(groups, written, kept, "train"),
    signals: kept.map(rewardSignalOf),
    sources: kept,
  };
}

/** What `log` sends: prepared groups as they are, others written and checked. */
export async function checkedForLog(
  groups: readonly GroupInput[],
  validate: GroupCheck,
): Promise<(readonly Uint8Array[])[]> {
  const prepared = allPrepared(groups);
  if (prepared) return prepared;
  const written = await prepareGroups(groups, "log");
  const kept = checkGroups(groups as TrajectoryGroupWire[], validate, "log").groups;
  return keptChunks(groups, written, kept, "log");
}

/** `train` needs something to learn from; say so before the service does, in its words. */
function requireTrainableGroups(groups: readonly TrajectoryGroupWire[]): void {
  if (groups.length === 0) {
    throw new InvalidTrainingOptionsError("train", [
      "groups: expected at least one trajectory group, got an empty array (gather some rollouts first)",
    ]);
  }
  if (groups.every((g) => g.trajectories.length === 0)) {
    throw new InvalidTrainingOptionsError("train", [
      `groups: none of the ${groups.length} group(s) holds a trajectory (a TrajectoryGroup built from [] or from rollouts that all failed); give each group the trajectories of its rollouts`,
    ]);
  }
}

/**
 * The bytes of the groups the check kept: those written already, and the
 * ones it changed (trajectories dropped) written again.
 */
async function keptChunks(
  groups: readonly GroupInput[],
  written: readonly PreparedGroup[],
  kept: readonly unknown[],
  method: string,
): Promise<(readonly Uint8Array[])[]> {
  const out: (readonly Uint8Array[])[] = [];
  for (const g of kept) {
    const at = groups.indexOf(g as GroupInput);
    out.push(
      at >= 0
        ? (written[at] as PreparedGroup).chunks
        : (await prepareGroup(g, method, out.length)).chunks,
    );
  }
  return out;
}

/** The groups' bytes (each in its pieces) when every group is a non-empty list of prepared ones. */
function allPrepared(groups: readonly GroupInput[]): (readonly Uint8Array[])[] | undefined {
  if (!Array.isArray(groups) || groups.length === 0) return undefined;
  if (!groups.every((g) => g instanceof PreparedGroup)) return undefined;
  return groups.map((g) => (g as PreparedGroup).chunks);
}
