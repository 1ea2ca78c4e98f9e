export {
  type ActiveRollout,
  currentRollout,
  type RecordedChoice,
  type RecordedCompletion,
  type RolloutOptions,
} from "./context.js";
export { Recorder, type RecorderOptions } from "./recorder.js";
