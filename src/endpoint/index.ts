// The one HTTP server the package runs (the recording endpoint behind
// `t.baseURL`, and the standalone proxy's routes on top of it). One way in.
export { RecordingEndpoint } from "./endpoint.js";
export type { CallProgress, EndpointRollout, RolloutHost, SessionOpenOptions } from "./host.js";
export {
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_MAX_RETRIES,
  DEFAULT_TIMEOUT_MS,
  type EndpointOptions,
  type ResolvedEndpointOptions,
  resolveEndpointOptions,
} from "./options.js";
export {
  CALL_NUMBER_HEADER,
  callerKey,
  RecordingRoutes,
  SESSION_HEADER,
  SESSION_ID,
  type SessionAccess,
  TRAJECTORY_HEADER,
} from "./recording.js";
export { EndpointServer, type Route, type RouteContext } from "./server.js";
export { type PartialAnswer, PROGRESS_EVERY_MS, SseProgress } from "./sse-progress.js";
export {
  checkUpstream,
  type RecordingUpstream,
  type TrainableModelLike,
  type UrlUpstream,
} from "./upstream.js";
