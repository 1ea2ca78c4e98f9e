// The standalone recording proxy: the one endpoint server with the recording
// routes (`/v1`, a key per rollout or session), the control API for an
// orchestrator in any language, sessions for deployed agents, and feedback
// by receipt id. The HTTP plumbing is the endpoint's and util/http.ts's.
import type { IncomingMessage, ServerResponse } from "node:http";
import {
  callerKey,
  type EndpointOptions,
  RecordingEndpoint,
  type RecordingUpstream,
  type Route,
  resolveEndpointOptions,
} from "../endpoint/index.js";
import { Recorder, type RecorderOptions } from "../recorder/index.js";
import type { GroupSink } from "../trajectory/index.js";
import { InvalidArgumentError, isObjectLike } from "../util/argument-error.js";
import { bearerToken, sameSecret } from "../util/http.js";
import { isLoopbackHostname } from "../util/loopback.js";
import { controlRoutes, fail, type TrainableLike } from "./control.js";
import { type ProductionInit, productionRoutes } from "./production.js";

export type { TrainableLike } from "./control.js";

/** Options of {@link startRecordingProxy}. */
export interface RecordingProxyOptions extends EndpointOptions {
  /** What agents' calls are forwarded to (as `new Recorder({ upstream })`). */
  upstream: RecordingUpstream;
  /**
   * The key of the control API (`/rollouts`, `/groups`, `/train`, sessions,
   * feedback): required when `host` is not loopback. Agents of rollouts never
   * use it (they get a key per rollout); a call naming its session with
   * `x-trajectory-session` uses it (or the session's own key).
   */
  apiKey?: string;
  /** How rollouts record (logprobs, token ids, policy), as on `Recorder`. */
  recorder?: Pick<
    RecorderOptions,
    "logprobs" | "tokenIds" | "policy" | "logger" | "markInfraFailures"
  >;
  /** Where `POST /groups/{id}/ship` sends a group (a `TrajectoryShipper`). */
  shipper?: GroupSink;
  /** What `POST /train` trains. Default: the upstream, when it is a TrainableModel. */
  model?: TrainableLike;
  /**
   * Rollouts kept at once (open, or finished and not yet shipped, trained on
   * or deleted); past it `POST /rollouts` answers 429. Default 10,000.
   */
  maxRollouts?: number;
  /**
   * Where sessions and rollouts are written as they record, and feedback is
   * kept: a `TrajectoryStore` (`trajectory-recorder/store`), or a
   * `RedisTrajectoryStore` (`trajectory-recorder/bullmq`) when several
   * processes share the trajectories. Without one,
   * sessions live in memory until they end and feedback is refused (503).
   */
  store?: ProductionInit["store"];
  /** How sessions end (idle timeout, how many open). */
  sessions?: RecorderOptions["sessions"];
  /** Signed feedback URLs and which web pages may use them. */
  feedback?: ProductionInit["feedback"];
}

/** A running recording proxy. */
export interface RecordingProxy {
  /** The proxy's root URL (the control API's), e.g. `http://127.0.0.1:8400`. */
  url: string;
  /** The OpenAI base URL agents use with their rollout's key, `url` + `/v1`. */
  baseURL: string;
  /** The base URL an Anthropic SDK takes (it adds `/v1/messages` itself): `url`. */
  anthropicBaseURL: string;
  /** The recorder behind it (its sessions, its store). */
  recorder: Recorder;
  /** Stops listening; open rollouts and sessions are finished, connections closed. */
  close(): Promise<void>;
}

/**
 * Starts the recording proxy: an OpenAI-compatible endpoint that records
 * each rollout's (or session's) chat completions (the same Trajectory JSON
 * as a wrapped client), a JSON API to drive rollouts from any language, and
 * feedback by receipt id. See docs/proxy.md and docs/production.md.
 *
 * @example
 * import { startRecordingProxy } from "trajectory-recorder/proxy";
 * const proxy = await startRecordingProxy({ upstream: model, port: 8400 });
 * // POST http://127.0.0.1:8400/rollouts -> { id, base_url, api_key }
 */
export async function startRecordingProxy(options: RecordingProxyOptions): Promise<RecordingProxy> {
  const call = "startRecordingProxy(options)";
  if (!isObjectLike(options)) throw new InvalidArgumentError(call, "options", "an object", options);
  const {
    upstream,
    apiKey,
    recorder: recording,
    shipper,
    model,
    maxRollouts = 10_000,
    store,
    sessions,
    feedback,
    ...endpointOptions
  } = options as RecordingProxyOptions;
  if (apiKey !== undefined && (typeof apiKey !== "string" || apiKey.length < 8))
    throw new InvalidArgumentError(
      call,
      "options.apiKey",
      "a string of at least 8 characters",
      apiKey,
    );
  const host = endpointOptions.host ?? "127.0.0.1";
  if (!isLoopbackHostname(host) && apiKey === undefined)
    throw new InvalidArgumentError(
      call,
      "options.apiKey",
      "a key for the control API",
      apiKey,
      `the proxy would listen on ${host}, which other machines can reach: give the control API a key (apiKey)`,
    );
  if (!Number.isInteger(maxRollouts) || maxRollouts < 1)
    throw new InvalidArgumentError(
      call,
      "options.maxRollouts",
      "a whole number of at least 1",
      maxRollouts,
    );
  const resolved = resolveEndpointOptions(call, endpointOptions);
  const trainer =
    model ??
    (typeof (upstream as Partial<TrainableLike>)?.train === "function"
      ? (upstream as unknown as TrainableLike)
      : undefined);
  // The recorder records; this proxy's endpoint serves it (the recorder
  // itself starts no server: it has no upstream of its own).
  const recorder = new Recorder({ ...recording, store, sessions });
  const hasKey = (req: IncomingMessage) =>
    apiKey === undefined || sameSecret(bearerToken(req), apiKey);
  const authorized = (req: IncomingMessage, res: ServerResponse): boolean => {
    if (hasKey(req)) return true;
    fail(
      res,
      401,
      "The control API needs its key: send Authorization: Bearer <the proxy's apiKey>.",
      "invalid_api_key",
    );
    return false;
  };
  let endpoint: RecordingEndpoint | undefined;
  const endpointOf = () => endpoint as RecordingEndpoint;
  const control = controlRoutes({
    recorder,
    endpoint: endpointOf,
    authorized,
    shipper,
    trainer,
    maxRollouts,
  });
  const production = productionRoutes({
    recorder,
    endpoint: endpointOf,
    authorized,
    hasKey,
    store,
    feedback,
    logger: resolved.logger,
  });
  const routes: Route[] = [...control.routes, ...production.routes];
  endpoint = new RecordingEndpoint(
    {
      upstream,
      host: recorder,
      options: resolved,
      // A call names its session with the control key, sent as an OpenAI SDK
      // sends a key (Bearer) or as an Anthropic SDK does (x-api-key).
      sessions: {
        allowHeader: (req) =>
          apiKey === undefined ||
          sameSecret(
            callerKey(req, (k) => sameSecret(k, apiKey)),
            apiKey,
          ),
      },
      progress: store,
    },
    routes,
  );
  await endpoint.start();
  const started = endpoint;
  return {
    url: started.url,
    baseURL: started.baseURL,
    anthropicBaseURL: started.url,
    recorder,
    close: async () => {
      control.finishOpen();
      await recorder.close();
      await started.close();
    },
  };
}
