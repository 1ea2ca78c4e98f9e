// The standalone recording proxy: the recording endpoint (`/v1`, one key per
// rollout) plus a small JSON API for an orchestrator in any language to open
// rollouts, score them, finish them, group them and train on the groups.
import { timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { setExtraRoutes } from "../recorder/endpoint/rollout-trajectory.js";
import {
  type EndpointOptions,
  Recorder,
  type RecorderOptions,
  type RecordingUpstream,
  type RolloutTrajectory,
} from "../recorder/index.js";
import { type GroupSink, type Trajectory, TrajectoryGroup } from "../trajectory/index.js";
import { InvalidArgumentError, isObjectLike } from "../util/argument-error.js";
import { errorMessage } from "../util/error-message.js";
import { isLoopbackHostname } from "../util/loopback.js";
import {
  type ApiIssue,
  CreateGroupRequest,
  check,
  OpenRolloutRequest,
  type RolloutInfo,
  TrainRequest,
  UpdateRolloutRequest,
} from "./api.js";

/** What `POST /train` trains: a TrainableModel (the upstream, when it is one). */
export interface TrainableLike {
  /** Trains on the groups (as `TrainableModel.train`), resolving with the job's outcome. */
  train(
    groups: readonly TrajectoryGroup[],
    config?: { learningRate?: number },
    options?: { logger?: { info(message: string): void } },
  ): Promise<{
    jobId: string | null;
    step: number;
    metrics: Record<string, number>;
    skipped?: string;
  }>;
}

/** Options of {@link startRecordingProxy}. */
export interface RecordingProxyOptions extends EndpointOptions {
  /** What agents' calls are forwarded to (as `new Recorder({ upstream })`). */
  upstream: RecordingUpstream;
  /**
   * The key of the control API (`/rollouts`, `/groups`, `/train`): required
   * when `host` is not loopback. Agents never use it (they get a key per rollout).
   */
  apiKey?: string;
  /** How rollouts record (logprobs, token ids, policy), as on `Recorder`. */
  recorder?: Pick<RecorderOptions, "logprobs" | "tokenIds" | "policy" | "logger">;
  /** Where `POST /groups/{id}/ship` sends a group (a `TrajectoryShipper`). */
  shipper?: GroupSink;
  /** What `POST /train` trains. Default: the upstream, when it is a TrainableModel. */
  model?: TrainableLike;
  /**
   * Rollouts kept at once (open, or finished and not yet shipped, trained on
   * or deleted); past it `POST /rollouts` answers 429. Default 10,000.
   */
  maxRollouts?: number;
}

/** A running recording proxy. */
export interface RecordingProxy {
  /** The proxy's root URL (the control API's), e.g. `http://127.0.0.1:8400`. */
  url: string;
  /** The OpenAI base URL agents use with their rollout's key, `url` + `/v1`. */
  baseURL: string;
  /** Stops listening; open rollouts are finished, connections closed. */
  close(): Promise<void>;
}

interface Entry {
  id: string;
  t: RolloutTrajectory;
  key: string;
  status: "open" | "finished";
  group: string | null;
  end: () => void;
  done: Promise<Trajectory>;
}

const CONTROL_BODY_BYTES = 1024 * 1024;

/**
 * Starts the recording proxy: an OpenAI-compatible endpoint that records
 * each rollout's chat completions (the same Trajectory JSON as a wrapped
 * client), and a JSON API to drive rollouts from any language. See
 * docs/proxy.md for the API.
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
    ...endpoint
  } = options as RecordingProxyOptions;
  if (apiKey !== undefined && (typeof apiKey !== "string" || apiKey.length < 8))
    throw new InvalidArgumentError(
      call,
      "options.apiKey",
      "a string of at least 8 characters",
      apiKey,
    );
  const host = endpoint.host ?? "127.0.0.1";
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
  const trainer =
    model ??
    (typeof (upstream as Partial<TrainableLike>)?.train === "function"
      ? (upstream as unknown as TrainableLike)
      : undefined);
  const recorder = new Recorder({ ...recording, upstream, endpoint });
  const rollouts = new Map<string, Entry>();
  const groups = new Map<
    string,
    { ids: string[]; metadata: Record<string, unknown> | undefined }
  >();
  let next = 0;
  let nextGroup = 0;

  const info = (e: Entry, withKey = false): RolloutInfo => ({
    id: e.id,
    status: e.status,
    base_url: baseURL,
    ...(withKey ? { api_key: e.key } : {}),
    group: e.group,
    reward: e.t.reward,
    metrics: { ...e.t.metrics },
    metadata: e.t.metadata,
  });

  const update = (t: RolloutTrajectory, body: UpdateRolloutRequest) => {
    if (body.reward !== undefined) t.reward = body.reward;
    if (body.metrics) Object.assign(t.metrics, body.metrics);
    if (body.metadata) Object.assign(t.metadata, body.metadata);
    for (const line of body.logs ?? []) t.log(line);
  };

  const finish = async (e: Entry): Promise<Trajectory> => {
    e.status = "finished";
    e.end();
    return e.done;
  };

  const routes = async (
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
  ): Promise<boolean> => {
    const parts = path.split("/").filter(Boolean);
    const root = parts[0];
    if (root !== "rollouts" && root !== "groups" && root !== "train" && root !== "health")
      return false;
    if (root === "health") {
      json(res, 200, { status: "ok", rollouts: rollouts.size });
      return true;
    }
    if (apiKey !== undefined && !authorized(req, apiKey)) {
      fail(
        res,
        401,
        "The control API needs its key: send Authorization: Bearer <the proxy's apiKey>.",
        "invalid_api_key",
      );
      return true;
    }
    const method = req.method ?? "GET";
    const body = method === "GET" || method === "DELETE" ? undefined : await readJson(req, res);
    if (body === INVALID) return true;
    const route = `${method} /${root}${parts.length > 1 ? "/{id}" : ""}${parts[2] ? `/${parts[2]}` : ""}`;
    const id = parts[1] ?? "";
    switch (route) {
      case "POST /rollouts": {
        const r = parsed(res, OpenRolloutRequest, body);
        if (!r) return true;
        if (rollouts.size >= maxRollouts) {
          fail(
            res,
            429,
            `The proxy holds ${maxRollouts} rollouts (maxRollouts): finish, group and ship or delete some first.`,
            "too_many_rollouts",
          );
          return true;
        }
        const entryId = `rollout-${++next}`;
        let end!: () => void;
        const ended = new Promise<void>((resolve) => (end = resolve));
        let t!: RolloutTrajectory;
        let started!: () => void;
        const ready = new Promise<void>((resolve) => (started = resolve));
        const done = recorder.rollout(
          (trajectory) => {
            t = trajectory;
            started();
            return ended;
          },
          { metadata: r.metadata },
        );
        done.catch(() => {});
        await ready;
        const entry: Entry = {
          id: entryId,
          t,
          key: t.apiKey,
          status: "open",
          group: null,
          end,
          done,
        };
        rollouts.set(entryId, entry);
        json(res, 201, info(entry, true));
        return true;
      }
      case "GET /rollouts/{id}":
      case "PATCH /rollouts/{id}":
      case "DELETE /rollouts/{id}":
      case "POST /rollouts/{id}/finish": {
        const e = rollouts.get(id);
        if (!e) {
          fail(
            res,
            404,
            `No rollout ${JSON.stringify(id)}: it was never opened, or was deleted, shipped or trained on.`,
            "rollout_not_found",
            "id",
          );
          return true;
        }
        if (method === "GET") {
          json(res, 200, info(e));
          return true;
        }
        if (method === "DELETE") {
          rollouts.delete(id);
          if (e.status === "open") await finish(e);
          json(res, 200, { id, deleted: true });
          return true;
        }
        const u = parsed(res, UpdateRolloutRequest, body);
        if (!u) return true;
        update(e.t, u);
        if (method === "PATCH") {
          json(res, 200, info(e));
          return true;
        }
        const trajectory = await finish(e);
        json(res, 200, { ...info(e), trajectory: trajectory.toJSON() });
        return true;
      }
      case "POST /groups": {
        const g = parsed(res, CreateGroupRequest, body);
        if (!g) return true;
        const issues: ApiIssue[] = [];
        g.rollouts.forEach((rid, i) => {
          const e = rollouts.get(rid);
          if (!e)
            issues.push({
              path: `body.rollouts.${i}`,
              message: `no rollout ${JSON.stringify(rid)}`,
            });
          else if (e.status !== "finished")
            issues.push({
              path: `body.rollouts.${i}`,
              message: `rollout ${rid} is still open: finish it first`,
            });
          else if (e.group)
            issues.push({
              path: `body.rollouts.${i}`,
              message: `rollout ${rid} is already in group ${e.group}`,
            });
        });
        if (new Set(g.rollouts).size !== g.rollouts.length)
          issues.push({ path: "body.rollouts", message: "a rollout is listed twice" });
        if (issues.length) {
          invalid(res, issues, 409);
          return true;
        }
        const groupId = `group-${++nextGroup}`;
        for (const rid of g.rollouts) (rollouts.get(rid) as Entry).group = groupId;
        groups.set(groupId, { ids: g.rollouts, metadata: g.metadata });
        json(res, 201, { id: groupId, rollouts: g.rollouts });
        return true;
      }
      case "GET /groups/{id}":
      case "POST /groups/{id}/ship": {
        const group = groupOf(id);
        if (!group) {
          fail(
            res,
            404,
            `No group ${JSON.stringify(id)}: it was never made, or was shipped or trained on.`,
            "group_not_found",
            "id",
          );
          return true;
        }
        if (method === "GET") {
          json(res, 200, { id, group: group.toJSON() });
          return true;
        }
        if (!shipper) {
          fail(
            res,
            409,
            "This proxy has no shipper: start it with { shipper } (a TrajectoryShipper), or train on the group with POST /train.",
            "no_shipper",
          );
          return true;
        }
        await shipper.add(group);
        forget(id);
        json(res, 200, { id, shipped: true });
        return true;
      }
      case "POST /train": {
        const r = parsed(res, TrainRequest, body);
        if (!r) return true;
        if (!trainer) {
          fail(
            res,
            409,
            "This proxy cannot train: its upstream is not a TrainableModel (start it with { model }).",
            "no_model",
          );
          return true;
        }
        const issues: ApiIssue[] = [];
        const picked: TrajectoryGroup[] = [];
        r.groups.forEach((gid, i) => {
          const group = groupOf(gid);
          if (group) picked.push(group);
          else
            issues.push({ path: `body.groups.${i}`, message: `no group ${JSON.stringify(gid)}` });
        });
        if (issues.length) {
          invalid(res, issues, 404);
          return true;
        }
        try {
          const result = await trainer.train(
            picked,
            r.learning_rate === undefined ? {} : { learningRate: r.learning_rate },
          );
          for (const gid of r.groups) forget(gid);
          json(res, 200, {
            job_id: result.jobId,
            step: result.step,
            metrics: result.metrics,
            skipped: result.skipped ?? null,
          });
        } catch (error) {
          fail(res, 502, `Training failed: ${errorMessage(error)}`, "training_failed");
        }
        return true;
      }
      default:
        fail(
          res,
          404,
          `No route ${method} ${path}. The control API: POST /rollouts, GET|PATCH|DELETE /rollouts/{id}, POST /rollouts/{id}/finish, POST /groups, GET /groups/{id}, POST /groups/{id}/ship, POST /train.`,
          "unknown_url",
        );
        return true;
    }
  };

  function groupOf(id: string): TrajectoryGroup | undefined {
    const g = groups.get(id);
    if (!g) return undefined;
    const ts = g.ids.map((rid) => (rollouts.get(rid) as Entry).t);
    return new TrajectoryGroup(ts, g.metadata ? { metadata: g.metadata as never } : {});
  }

  function forget(groupId: string): void {
    for (const rid of groups.get(groupId)?.ids ?? []) rollouts.delete(rid);
    groups.delete(groupId);
  }

  setExtraRoutes(recorder, routes);
  const baseURL = await recorder.startEndpoint();
  return {
    url: baseURL.replace(/\/v1$/, ""),
    baseURL,
    close: async () => {
      for (const e of rollouts.values()) if (e.status === "open") e.end();
      await recorder.close();
    },
  };
}

function authorized(req: IncomingMessage, key: string): boolean {
  const header = req.headers.authorization;
  if (typeof header !== "string" || !/^bearer /i.test(header)) return false;
  const given = Buffer.from(header.slice(7).trim());
  const want = Buffer.from(key);
  return given.length === want.length && timingSafeEqual(given, want);
}

function json(res: ServerResponse, status: number, value: unknown): void {
  const text = JSON.stringify(value);
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
  });
  res.end(text);
}

function fail(
  res: ServerResponse,
  status: number,
  message: string,
  code: string,
  param: string | null = null,
): void {
  json(res, status, { error: { message, type: "invalid_request_error", param, code } });
}

function invalid(res: ServerResponse, issues: ApiIssue[], status = 400): void {
  const message = issues.map((i) => `${i.path}: ${i.message}`).join("; ");
  json(res, status, {
    error: {
      message,
      type: "invalid_request_error",
      param: issues[0]?.path ?? null,
      code: "invalid_body",
      issues,
    },
  });
}

function parsed<T>(
  res: ServerResponse,
  schema: Parameters<typeof check<T>>[0],
  body: unknown,
): T | undefined {
  const r = check(schema, body);
  if ("issues" in r) {
    invalid(res, r.issues);
    return undefined;
  }
  return r.data;
}

const INVALID = Symbol("invalid");

async function readJson(req: IncomingMessage, res: ServerResponse): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > CONTROL_BODY_BYTES) {
      res.setHeader("connection", "close");
      fail(
        res,
        413,
        `The request body is larger than the control API accepts (${CONTROL_BODY_BYTES} bytes).`,
        "request_too_large",
      );
      return INVALID;
    }
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString("utf8");
  if (text.trim() === "") return undefined;
  try {
    return JSON.parse(text);
  } catch (error) {
    fail(res, 400, `The request body is not JSON (${errorMessage(error)}).`, "invalid_json");
    return INVALID;
  }
}
