/**
 * Replayed groups for RL: recorded states of a production store sampled
 * again from the current checkpoint as groups, scored together, for
 * `model.train`. See docs/production.md, "Replayed groups for RL".
 *
 * @packageDocumentation
 * @module trajectory-recorder/replay
 */
// Also the folder's way in for the CLI.
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
