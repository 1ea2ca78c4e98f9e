/**
 * What framework plugins build on: the current rollout (`currentRollout`, `ActiveRollout`),
 * recording a completion the plugin saw, stream accumulation, wrapping a client. The contract is
 * src/recorder/CORE-CONTRACT.md in the repository.
 *
 * @packageDocumentation
 * @module trajectory-recorder/core
 */
// The recorder core: recording rollouts. This folder index is also the
// package's `trajectory-recorder/core` entry point, what framework plugins
// build on (the contract: CORE-CONTRACT.md beside this file); its API report
// is api/trajectory-recorder-core.api.md.

export type {
  EndpointOptions,
  RecordingUpstream,
  TrainableModelLike,
  UrlUpstream,
} from "../endpoint/index.js";
export type { LineageMode } from "../trajectory/index.js";
// Shared by every folder; here for plugins, which throw it on a bad argument.
export { InvalidArgumentError } from "../util/argument-error.js";
export { appendReasoning, REASONING_FIELDS, StreamAccumulator } from "./accumulate.js";
export type {
  ActiveRollout,
  RecordedChoice,
  RecordedCompletion,
  RolloutOptions,
} from "./active-rollout.js";
export { currentRollout } from "./context.js";
export { RolloutAbortedError } from "./errors.js";
export { RolloutHandle, type RolloutStore } from "./handle.js";
export {
  type AnthropicConversionOptions,
  type AnthropicReasoning,
  anthropicFinishReason,
  anthropicInputToMessages,
  anthropicOutputToMessages,
  anthropicToolChoiceToChat,
  anthropicToolsToChat,
} from "./messages-convert.js";
export type { Receipt } from "./receipts.js";
export {
  type OpenOptions,
  Recorder,
  type RolloutCallOptions,
  type RolloutContext,
  type RolloutErrorScorer,
} from "./recorder.js";
export type { RecorderOptions } from "./recorder-options.js";
export { type ChatCompletionBody, recordedChoices, recordedResponse } from "./response.js";
export {
  type ChatConversion,
  responsesInputToMessages,
  responsesOutputToMessage,
  responsesToolsToChat,
} from "./responses-convert.js";
export { RolloutTrajectory } from "./rollout-trajectory.js";
export type { SessionOptions } from "./sessions.js";
export { type WrapOptions, wrapClient } from "./wrap.js";
