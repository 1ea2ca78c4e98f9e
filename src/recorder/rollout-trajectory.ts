import { Trajectory } from "../trajectory/index.js";

/** How a rollout's trajectory reaches an OpenAI-compatible endpoint that records into it. */
export interface EndpointAccess {
  baseURL(): string;
  apiKey(): string;
}

const ACCESS = new WeakMap<Trajectory, EndpointAccess>();
const IDS = new WeakMap<Trajectory, string>();

/** @internal Ties a rollout's trajectory to the endpoint serving it. */
export function attachEndpoint(t: Trajectory, access: EndpointAccess): void {
  ACCESS.set(t, access);
}

/** @internal Gives a rollout's trajectory its receipt id. */
export function setTrajectoryId(t: Trajectory, id: string): void {
  IDS.set(t, id);
}

function accessOf(t: Trajectory, name: string): EndpointAccess {
  const access = ACCESS.get(t);
  if (!access)
    throw new Error(
      `t.${name} needs an upstream to forward to: new Recorder({ upstream: model }) (a TrainableModel) or new Recorder({ upstream: { baseURL, apiKey } }) (any OpenAI-compatible server).`,
    );
  return access;
}

/**
 * The trajectory a rollout records into (what `recorder.rollout(fn)` hands
 * `fn`), with its receipt id and the rollout's own OpenAI-compatible
 * endpoint: give `baseURL` and `apiKey` to any client in any process (the
 * Python `openai` SDK in a subprocess, curl, a Go program) and its chat
 * completions and Responses API calls are recorded here, as a wrapped
 * client's would be; an Anthropic SDK takes `anthropicBaseURL` instead, for
 * Messages. None of them is part of the JSON.
 *
 * @example
 * const recorder = new Recorder({ upstream: model });
 * const t = await recorder.rollout(async (t) => {
 *   await run("python", ["agent.py"], { env: { OPENAI_BASE_URL: t.baseURL, OPENAI_API_KEY: t.apiKey } });
 *   t.reward = 1;
 * });
 */
export class RolloutTrajectory extends Trajectory {
  /**
   * The trajectory's receipt: the id that feedback (`recorder.feedback`,
   * `POST /v1/feedback`) and `GET /v1/trajectories/{id}` take, and that the
   * endpoint sends back in the `x-trajectory-id` header of every recorded answer.
   */
  get id(): string {
    return IDS.get(this) ?? "";
  }

  /**
   * The endpoint's base URL, ending in `/v1` (loopback unless the
   * recorder's `endpoint.host` says otherwise). Needs the recorder's `upstream`.
   */
  get baseURL(): string {
    return accessOf(this, "baseURL").baseURL();
  }

  /**
   * The same endpoint's root URL, without `/v1`, for an Anthropic SDK: they
   * add `/v1/messages` to their base URL themselves. Give it as
   * `ANTHROPIC_BASE_URL` (or `new Anthropic({ baseURL })`), with
   * {@link apiKey} as `ANTHROPIC_API_KEY`. Needs the recorder's `upstream`.
   *
   * @example
   * await run("python", ["agent.py"], {
   *   env: { ANTHROPIC_BASE_URL: t.anthropicBaseURL, ANTHROPIC_API_KEY: t.apiKey },
   * });
   */
  get anthropicBaseURL(): string {
    return accessOf(this, "anthropicBaseURL").baseURL().replace(/\/v1$/, "");
  }

  /**
   * This rollout's key for the endpoint: calls carrying it are recorded here;
   * once the rollout has ended they answer 409. Needs the recorder's `upstream`.
   */
  get apiKey(): string {
    return accessOf(this, "apiKey").apiKey();
  }
}
