/**
 * Records Vercel AI SDK (and Mastra) model calls as trajectories.
 *
 * @packageDocumentation
 * @module trajectory-recorder/ai-sdk
 */
// trajectory-recorder/ai-sdk: record Vercel AI SDK (and Mastra) model calls.
// Framework packages are imported as types only.
export { type RecordMastraAgentOptions, recordMastraAgent } from "./mastra.js";
export { type RecorderMiddlewareOptions, recorderMiddleware } from "./middleware.js";
export { type RecorderTelemetry, recorderTelemetry } from "./telemetry.js";
