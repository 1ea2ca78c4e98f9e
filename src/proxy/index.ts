/**
 * The standalone recording proxy: an OpenAI-compatible endpoint that records
 * each rollout's (or session's) chat completions as ART trajectories, with a
 * JSON API for orchestrators in any language (docs/proxy.md), and sessions,
 * receipts and feedback for deployed agents (docs/production.md).
 *
 * @packageDocumentation
 * @module trajectory-recorder/proxy
 */

export type {
  EndpointOptions,
  RecordingUpstream,
  RolloutTrajectory,
  TrainableModelLike,
  UrlUpstream,
} from "../recorder/index.js";
export {
  CreateGroupRequest,
  OpenRolloutRequest,
  RolloutInfo,
  TrainRequest,
  UpdateRolloutRequest,
} from "./api.js";
export type { FeedbackOptions } from "./production.js";
export {
  type RecordingProxy,
  type RecordingProxyOptions,
  startRecordingProxy,
  type TrainableLike,
} from "./server.js";
