export { appendReasoning, REASONING_FIELDS, StreamAccumulator } from "./accumulate.js";
export {
  type ActiveRollout,
  currentRollout,
  type RecordedChoice,
  type RecordedCompletion,
  type RolloutOptions,
} from "./context.js";
export { Recorder, type RecorderOptions } from "./recorder.js";
export { type ChatCompletionBody, recordedChoices, recordedResponse } from "./response.js";
export { type WrapOptions, wrapClient } from "./wrap.js";
