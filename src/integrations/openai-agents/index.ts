/**
 * Records OpenAI Agents SDK runs as trajectories.
 *
 * @packageDocumentation
 * @module trajectory-recorder/openai-agents
 */
// trajectory-recorder/openai-agents: record OpenAI Agents SDK runs as trajectories.
export { attachRecorder } from "./hooks.js";
export {
  type ChatCompletionsClient,
  RecordingModelProvider,
  type RecordingModelProviderOptions,
  recordingModelProvider,
} from "./provider.js";
export { type RecordingRunnerOptions, recordingRunner } from "./runner.js";
export { scoreMaxTurns } from "./score.js";
