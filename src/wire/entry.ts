/**
 * The zod schema of every request and response of the Training Service, and of the ART trajectory
 * JSON, in the wire's snake_case: for code that validates or builds that JSON itself.
 *
 * @packageDocumentation
 * @module trajectory-recorder/wire
 */
// The `trajectory-recorder/wire` entry point: the folder's exports, from a
// file of their own that no other folder imports. Were the entry this
// folder's index.ts, which the trajectory folder imports, bundlers (esbuild's
// code splitting) would keep the whole folder in one chunk, and a program
// importing only `Recorder` would carry every REST schema too.

// ART's names and encodings, beside the schemas of the JSON they describe.
export { ART_METRIC_NAMES } from "../training/metric-names.js";
export { ART_TRAIN_DEFAULTS } from "../training/train-defaults.js";
export { type ArtPayload, decodeArtPayload } from "../trajectory/art-payload.js";
export {
  type ChoiceLike,
  isChoice,
  type MessageOrChoice,
  type MessageParam,
} from "../trajectory/messages.js";
// The schemas, not the internal `sameType` check that index.ts adds.
export * from "./api-models.js";
export * from "./api-service.js";
export * from "./api-training.js";
export * from "./chat.js";
export * from "./choice.js";
export * from "./messages.js";
export * from "./trajectory.js";
