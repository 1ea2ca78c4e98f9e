/**
 * The standalone recording proxy: an OpenAI-compatible endpoint that records
 * each rollout's chat completions as ART trajectories, with a JSON API for
 * orchestrators in any language (docs/proxy.md).
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
export {
  type RecordingProxy,
  type RecordingProxyOptions,
  startRecordingProxy,
  type TrainableLike,
} from "./server.js";
