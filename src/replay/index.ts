// Replayed groups for RL: recorded production states sampled again as groups.
export { REPLAY_DEFAULTS } from "./options.js";
export { replayGroups } from "./replay.js";
export { REPLAY_SELECT_DEFAULTS } from "./select.js";
export type {
  ReplayedState,
  ReplayOptions,
  ReplayResult,
  ReplayReward,
  ReplaySelect,
  ReplayState,
  ReplayStoreReader,
  ReplayToolCall,
  ReplayToolMessage,
  ToolRunner,
} from "./types.js";
