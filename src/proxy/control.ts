// The proxy's control API (rollouts, groups, training) as routes of the one
// endpoint server: each rollout is a handle the recorder opened, with a key
// of the endpoint's for its agent.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { RecordingEndpoint, Route, RouteContext } from "../endpoint/index.js";
import type { Recorder, RolloutHandle } from "../recorder/index.js";
import { type GroupSink, TrajectoryGroup } from "../trajectory/index.js";
import { errorMessage } from "../util/error-message.js";
import { readRequestBody, sendError, sendJson } from "../util/http.js";
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

const CONTROL_BODY_BYTES = 1024 * 1024;

interface Entry {
  id: string;
  handle: RolloutHandle;
  key: string;
  group: string | null;
}

/** Sends an error of the control API (`invalid_request_error`). */
export function fail(
  res: ServerResponse,
  status: number,
  message: string,
  code: string,
  param: string | null = null,
): void {
  sendError(res, status, message, "invalid_request_error", code, param);
}

/** Sends 400 (or `status`) naming each bad field. */
export function invalid(res: ServerResponse, issues: ApiIssue[], status = 400): void {
  sendError(
    res,
    status,
    issues.map((i) => `${i.path}: ${i.message}`).join("; "),
    "invalid_request_error",
    "invalid_body",
    issues[0]?.path ?? null,
    { issues },
  );
}

/** Marks a body that was refused (the answer is sent). */
export const REFUSED = Symbol("refused");

/** A JSON request body of at most `max` bytes; `undefined` when empty, {@link REFUSED} once answered. */
export async function readJson(
  req: IncomingMessage,
  res: ServerResponse,
  max = CONTROL_BODY_BYTES,
): Promise<unknown> {
  const raw = await readRequestBody(req, max);
  if (!raw) {
    res.setHeader("connection", "close");
    fail(
      res,
      413,
      `The request body is larger than the control API accepts (${max} bytes).`,
      "request_too_large",
    );
    return REFUSED;
  }
  const text = raw.toString("utf8");
  if (text.trim() === "") return undefined;
  try {
    return JSON.parse(text);
  } catch (error) {
    fail(res, 400, `The request body is not JSON (${errorMessage(error)}).`, "invalid_json");
    return REFUSED;
  }
}

/** Parses `body` with `schema`, or answers 400 naming the fields. */
export function parsed<T>(
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

/** What the control API is made with. */
export interface ControlInit {
  recorder: Recorder;
  endpoint: () => RecordingEndpoint;
  /** Answers 401 unless the request carries the control key; true when it may go on. */
  authorized: (req: IncomingMessage, res: ServerResponse) => boolean;
  shipper?: GroupSink;
  trainer?: TrainableLike;
  maxRollouts: number;
}

/** The control API's routes (`/rollouts`, `/groups`, `/train`, `/health`), and a way to finish its open rollouts. */
export function controlRoutes(init: ControlInit): { routes: Route[]; finishOpen(): void } {
  const { recorder, authorized, shipper, trainer, maxRollouts } = init;
  const rollouts = new Map<string, Entry>();
  const groups = new Map<
    string,
    { ids: string[]; metadata: Record<string, unknown> | undefined }
  >();
  let next = 0;
  let nextGroup = 0;

  const info = (e: Entry, withKey = false): RolloutInfo => ({
    id: e.id,
    status: e.handle.ended ? "finished" : "open",
    base_url: init.endpoint().baseURL,
    anthropic_base_url: init.endpoint().url,
    ...(withKey ? { api_key: e.key } : {}),
    group: e.group,
    reward: e.handle.trajectory.reward,
    metrics: { ...e.handle.trajectory.metrics },
    metadata: e.handle.trajectory.metadata,
  });

  const groupOf = (id: string): TrajectoryGroup | undefined => {
    const g = groups.get(id);
    if (!g) return undefined;
    const ts = g.ids.map((rid) => (rollouts.get(rid) as Entry).handle.trajectory);
    return new TrajectoryGroup(ts, g.metadata ? { metadata: g.metadata as never } : {});
  };

  const forget = (groupId: string): void => {
    for (const rid of groups.get(groupId)?.ids ?? []) rollouts.delete(rid);
    groups.delete(groupId);
  };

  /** Reads, checks the key, parses: the body, or undefined once answered. */
  const guarded =
    <T>(
      schema: Parameters<typeof check<T>>[0] | undefined,
      handle: (ctx: RouteContext, body: T) => void | Promise<void>,
    ) =>
    async (ctx: RouteContext): Promise<void> => {
      if (!authorized(ctx.req, ctx.res)) return;
      let body: T = undefined as T;
      if (schema) {
        const raw = await readJson(ctx.req, ctx.res);
        if (raw === REFUSED) return;
        const p = parsed(ctx.res, schema, raw);
        if (!p) return;
        body = p;
      }
      await handle(ctx, body);
    };

  const rolloutOf = (res: ServerResponse, id: string): Entry | undefined => {
    const e = rollouts.get(id);
    if (!e)
      fail(
        res,
        404,
        `No rollout ${JSON.stringify(id)}: it was never opened, or was deleted, shipped or trained on.`,
        "rollout_not_found",
        "id",
      );
    return e;
  };

  const update = (e: Entry, body: UpdateRolloutRequest) => {
    const t = e.handle.trajectory;
    if (body.reward !== undefined) t.reward = body.reward;
    if (body.metrics) Object.assign(t.metrics, body.metrics);
    if (body.metadata) Object.assign(t.metadata, body.metadata);
    for (const line of body.logs ?? []) t.log(line);
  };

  const finishOpen = () => {
    for (const e of rollouts.values()) e.handle.finish();
  };
  const routes: Route[] = [
    {
      method: "GET",
      path: "/health",
      handle: ({ res }) => sendJson(res, 200, { status: "ok", rollouts: rollouts.size }),
    },
    {
      method: "POST",
      path: "/rollouts",
      handle: guarded(OpenRolloutRequest, ({ res }, r) => {
        if (rollouts.size >= maxRollouts) {
          fail(
            res,
            429,
            `The proxy holds ${maxRollouts} rollouts (maxRollouts): finish, group and ship or delete some first.`,
            "too_many_rollouts",
          );
          return;
        }
        const handle = recorder.open({ metadata: r.metadata });
        const endpoint = init.endpoint();
        const key = endpoint.open(handle);
        handle.onFinish(() => endpoint.finish(key));
        const entry: Entry = { id: `rollout-${++next}`, handle, key, group: null };
        rollouts.set(entry.id, entry);
        sendJson(res, 201, { ...info(entry, true), trajectory_id: handle.id });
      }),
    },
    {
      method: "GET",
      path: "/rollouts/:id",
      handle: guarded(undefined, ({ res, params }) => {
        const e = rolloutOf(res, params.id as string);
        if (e) sendJson(res, 200, info(e));
      }),
    },
    {
      method: "DELETE",
      path: "/rollouts/:id",
      handle: guarded(undefined, ({ res, params }) => {
        const id = params.id as string;
        const e = rolloutOf(res, id);
        if (!e) return;
        rollouts.delete(id);
        e.handle.finish();
        sendJson(res, 200, { id, deleted: true });
      }),
    },
    {
      method: "PATCH",
      path: "/rollouts/:id",
      handle: guarded(UpdateRolloutRequest, ({ res, params }, u) => {
        const e = rolloutOf(res, params.id as string);
        if (!e) return;
        update(e, u);
        sendJson(res, 200, info(e));
      }),
    },
    {
      method: "POST",
      path: "/rollouts/:id/finish",
      handle: guarded(UpdateRolloutRequest, ({ res, params }, u) => {
        const e = rolloutOf(res, params.id as string);
        if (!e) return;
        if (!e.handle.ended) update(e, u);
        const trajectory = e.handle.finish();
        sendJson(res, 200, { ...info(e), trajectory: trajectory.toJSON() });
      }),
    },
    {
      method: "POST",
      path: "/groups",
      handle: guarded(CreateGroupRequest, ({ res }, g) => {
        const issues: ApiIssue[] = [];
        g.rollouts.forEach((rid, i) => {
          const e = rollouts.get(rid);
          const path = `body.rollouts.${i}`;
          if (!e) issues.push({ path, message: `no rollout ${JSON.stringify(rid)}` });
          else if (!e.handle.ended)
            issues.push({ path, message: `rollout ${rid} is still open: finish it first` });
          else if (e.group)
            issues.push({ path, message: `rollout ${rid} is already in group ${e.group}` });
        });
        if (new Set(g.rollouts).size !== g.rollouts.length)
          issues.push({ path: "body.rollouts", message: "a rollout is listed twice" });
        if (issues.length) {
          invalid(res, issues, 409);
          return;
        }
        const groupId = `group-${++nextGroup}`;
        for (const rid of g.rollouts) (rollouts.get(rid) as Entry).group = groupId;
        groups.set(groupId, { ids: g.rollouts, metadata: g.metadata });
        sendJson(res, 201, { id: groupId, rollouts: g.rollouts });
      }),
    },
    {
      method: "GET",
      path: "/groups/:id",
      handle: guarded(undefined, ({ res, params }) => {
        const id = params.id as string;
        const group = groupOf(id);
        if (!group) groupNotFound(res, id);
        else sendJson(res, 200, { id, group: group.toJSON() });
      }),
    },
    {
      method: "POST",
      path: "/groups/:id/ship",
      handle: guarded(undefined, async ({ res, params }) => {
        const id = params.id as string;
        const group = groupOf(id);
        if (!group) {
          groupNotFound(res, id);
          return;
        }
        if (!shipper) {
          fail(
            res,
            409,
            "This proxy has no shipper: start it with { shipper } (a TrajectoryShipper), or train on the group with POST /train.",
            "no_shipper",
          );
          return;
        }
        await shipper.add(group);
        forget(id);
        sendJson(res, 200, { id, shipped: true });
      }),
    },
    {
      method: "POST",
      path: "/train",
      handle: guarded(TrainRequest, async ({ res }, r) => {
        if (!trainer) {
          fail(
            res,
            409,
            "This proxy cannot train: its upstream is not a TrainableModel (start it with { model }).",
            "no_model",
          );
          return;
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
          return;
        }
        try {
          const result = await trainer.train(
            picked,
            r.learning_rate === undefined ? {} : { learningRate: r.learning_rate },
          );
          for (const gid of r.groups) forget(gid);
          sendJson(res, 200, {
            job_id: result.jobId,
            step: result.step,
            metrics: result.metrics,
            skipped: result.skipped ?? null,
          });
        } catch (error) {
          fail(res, 502, `Training failed: ${errorMessage(error)}`, "training_failed");
        }
      }),
    },
  ];
  return { routes, finishOpen };
}

function groupNotFound(res: ServerResponse, id: string): void {
  fail(
    res,
    404,
    `No group ${JSON.stringify(id)}: it was never made, or was shipped or trained on.`,
    "group_not_found",
    "id",
  );
}
