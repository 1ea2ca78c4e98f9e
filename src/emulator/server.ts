// The emulator's HTTP layer: routing, bearer keys, validation (422 with
// FastAPI-style detail), pagination, and the background job runner.
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { z } from "zod";
import {
  ChatCompletionCreateParamsSchema,
  CheckpointDeleteParamsSchema,
  CheckpointListParamsSchema,
  EventListParamsSchema,
  LogParamsSchema,
  ModelCreateParamsSchema,
  SFTTrainingJobCreateParamsSchema,
  TrainingJobCreateParamsSchema,
  zodIssuesToValidationItems,
} from "../wire/index.js";
import { serveChat } from "./chat.js";
import { chatError, detail, HttpError } from "./errors.js";
import { finishReasonProblems } from "./finish-reasons.js";
import { type BodyShape, checkChatBounds, readJsonBody } from "./limits.js";
import { anthropicError, asAnthropicError, serveMessages } from "./messages.js";
import type { Params } from "./model.js";
import { ResponseMemory, serveResponses } from "./responses.js";
import { refreshStepMetrics, rewardMetrics } from "./step-metrics.js";
import type { Store, StoredJob, StoredModel } from "./store.js";
import type { DriftOptions } from "./template.js";
import { runJob, type TrainingDataAccess } from "./training.js";
import { forwardChat, forwardResponses } from "./upstream.js";
import { WandbArtifactApi } from "./wandb/index.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Who is calling: the key's entity, or anyone at all when the emulator takes any key. */
interface Caller {
  entity: string;
  /** No key list was configured: one local user who may act as any entity. */
  anyEntity: boolean;
}

export interface ServerOptions {
  store: Store;
  /** key → entity; undefined accepts any non-empty key as entity "local". */
  keys: Map<string, string> | undefined;
  upstream: string | undefined;
  /** Largest request body read; a larger one answers 413. */
  maxBodyBytes: number;
  /** Where SFT jobs may read their `training_data_url` from. */
  trainingData: TrainingDataAccess;
  /** How the chat template re-renders earlier turns (see template.ts). */
  drift?: DriftOptions;
}

export interface RunningServer {
  server: Server;
  stop(): Promise<void>;
}

export function buildServer(opts: ServerOptions): RunningServer {
  const { store } = opts;
  let stopped = false;
  const running = new Set<Promise<void>>();
  // Recent responses, for a later request's previous_response_id.
  const responses = new ResponseMemory();

  // W&B's artifact API on the same port, so SFT data uploaded as an artifact resolves here.
  const wandb = new WandbArtifactApi({
    keys: opts.keys,
    maxUploadBytes: opts.trainingData.maxFileBytes,
  });
  const startJob = (job: StoredJob) => {
    const readArtifact = (url: string) => wandb.read(url, job.entity);
    const p = runJob(
      { store, stopped: () => stopped, trainingData: opts.trainingData, readArtifact },
      job,
    ).finally(() => running.delete(p));
    running.add(p);
  };

  // Chat routes are called by plain `openai` clients, which read only
  // `{error: {message}}`; the service's own routes answer FastAPI's `{detail}`.
  const unauthorized = (message: string, openaiShape: boolean) =>
    openaiShape
      ? chatError(401, message, "invalid_api_key", null, "authentication_error")
      : detail(401, message);
  const callerOf = (req: IncomingMessage, openaiShape = false, apiKeyHeader = false): Caller => {
    // Anthropic's clients send their key as `x-api-key` (a bearer token works too).
    const apiKey = apiKeyHeader ? req.headers["x-api-key"] : undefined;
    const header =
      req.headers.authorization ?? (typeof apiKey === "string" ? `Bearer ${apiKey}` : "");
    const m = /^Bearer\s+(.+)$/i.exec(header);
    if (!m)
      throw unauthorized(
        "Missing bearer API key in the Authorization header; pass apiKey to the client.",
        openaiShape,
      );
    const key = (m[1] as string).trim();
    if (!opts.keys) return { entity: "local", anyEntity: true };
    const entity = opts.keys.get(key);
    if (!entity)
      throw unauthorized(
        "The API key is not valid for this server; use one of the keys it was started with.",
        openaiShape,
      );
    return { entity, anyEntity: false };
  };
  const mayUse = (caller: Caller, entity: string | undefined) =>
    caller.anyEntity || entity === caller.entity;

  const parse = <S extends z.ZodType>(
    schema: S,
    value: unknown,
    where: "body" | "query",
  ): z.infer<S> => {
    const r = schema.safeParse(value);
    if (!r.success)
      throw new HttpError(422, { detail: zodIssuesToValidationItems(r.error, where) });
    return r.data;
  };

  // The service's Choice takes only the finish_reasons of its enum (see finish-reasons.ts).
  const refuseFinishReasons = (groups: unknown): void => {
    const problems = finishReasonProblems(groups);
    if (problems.length > 0) throw new HttpError(422, { detail: problems });
  };

  const pathId = (value: string, name: string): string => {
    if (!UUID.test(value)) {
      throw new HttpError(422, {
        detail: [
          { loc: ["path", name], msg: "Input should be a valid UUID", type: "uuid_parsing" },
        ],
      });
    }
    return value;
  };

  // Another entity's model answers exactly as a missing one, so ids reveal nothing.
  const modelOr404 = (id: string, caller: Caller): StoredModel => {
    const model = store.models.get(id);
    if (!model || !mayUse(caller, model.entity)) throw detail(404, `Model ${id} not found.`);
    return model;
  };
  const jobOr404 = (id: string, caller: Caller): StoredJob => {
    const job = store.jobs.get(id);
    const entity = job?.entity ?? (job && store.models.get(job.model_id)?.entity);
    if (!job || !mayUse(caller, entity)) throw detail(404, `Training job ${id} not found.`);
    return job;
  };

  const pageQuery = (url: URL, withOrder: boolean) => {
    const q: Record<string, unknown> = {};
    const after = url.searchParams.get("after");
    const limit = url.searchParams.get("limit");
    const order = url.searchParams.get("order");
    if (after !== null) q.after = after;
    if (limit !== null) q.limit = /^-?\d+$/.test(limit) ? Number(limit) : limit;
    if (withOrder && order !== null) q.order = order;
    return q;
  };

  /**
   * One page after the cursor. `resume` places a cursor that is no longer in
   * the list (its item was deleted mid-walk) by where it stood.
   */
  function page<T extends { id: string }>(
    items: T[],
    after: string | undefined,
    limit: number,
    resume: (after: string) => number | undefined = () => undefined,
  ) {
    let start = 0;
    if (after !== undefined) {
      const i = items.findIndex((x) => x.id === after);
      const at = i === -1 ? resume(after) : i + 1;
      if (at === undefined)
        throw detail(404, `The cursor after=${after} is not an item of this list.`);
      start = at;
    }
    const data = items.slice(start, start + limit);
    return {
      object: "list",
      data,
      // The OpenAPI documents declare both as strings defaulting to "".
      first_id: data[0]?.id ?? "",
      last_id: data.at(-1)?.id ?? "",
      has_more: start + limit < items.length,
    };
  }

  const resolveModelParams = (name: string, caller: Caller): Params | undefined => {
    const m = /^wandb-artifact:\/\/\/([^/]+)\/([^/]+)\/([^:]+)(?::(.+))?$/.exec(name);
    if (!m) return undefined;
    const [, entity, project, modelName, tag] = m as unknown as [
      string,
      string,
      string,
      string,
      string?,
    ];
    const model = store.findModel(entity, project, modelName);
    if (!model || !mayUse(caller, model.entity))
      throw chatError(404, `The model ${name} does not exist.`, "model_not_found");
    if (!tag || tag === "latest") return store.latestCheckpoint(model.id)?.params;
    const step = /^step(\d+)$/.exec(tag);
    const cp = step
      ? store.modelCheckpoints(model.id).find((c) => c.step === Number(step[1]))
      : undefined;
    if (!cp) throw chatError(404, `The model ${name} has no checkpoint ${tag}.`, "model_not_found");
    return cp.params;
  };

  const readJson = (req: IncomingMessage, shape?: BodyShape) =>
    readJsonBody(req, opts.maxBodyBytes, shape);

  /** POST /v1/messages, every error in Anthropic's shape (the Anthropic SDKs read that one). */
  async function messagesRoute(req: IncomingMessage, res: ServerResponse, method: string) {
    try {
      const caller = callerOf(req, true, true);
      if (method !== "POST")
        throw anthropicError(405, `${method} is not allowed on /v1/messages; use POST.`);
      if (opts.upstream)
        throw anthropicError(
          404,
          "This emulator forwards chat completions to its upstream; /v1/messages is served only from its own policy (start it without an upstream).",
          "not_found_error",
        );
      const raw = await readJson(req, "chat");
      const model = (raw as { model?: unknown } | null)?.model;
      const params = typeof model === "string" ? resolveModelParams(model, caller) : undefined;
      return await serveMessages(req, res, raw, params, opts.drift);
    } catch (error) {
      throw asAnthropicError(error);
    }
  }

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = requestUrl(req);
    const method = req.method ?? "GET";
    const parts = url.pathname.replace(/\/+$/, "").split("/").filter(Boolean);
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    if (wandb.handles(method, url.pathname)) return wandb.serve(req, res, url);
    if (parts[0] !== "v1") {
      // Most often a base URL without /v1; both clients' error parsers read this shape.
      throw chatError(
        404,
        `No route for ${method} ${url.pathname}: every route of this server starts with /v1; does the client's base URL end in /v1?`,
        "not_found",
      );
    }
    const rest = parts.slice(1);

    if (method === "GET" && rest.join("/") === "health") return send(200, { status: "ok" });
    if (method === "GET" && rest.join("/") === "system-check") {
      return send(200, systemCheck());
    }
    const isChat = rest.join("/") === "chat/completions";
    if (rest.join("/") === "messages") return messagesRoute(req, res, method);
    const isResponses = rest.join("/") === "responses";
    const caller = callerOf(req, isChat || isResponses);

    if (method === "POST" && isResponses) {
      const raw = await readJson(req, "chat");
      if (opts.upstream) return forwardResponses(opts.upstream, raw, req, res);
      const params = (model: string) => resolveModelParams(model, caller);
      return serveResponses(req, res, raw, params, responses, opts.drift);
    }

    if (method === "POST" && isChat) {
      const raw = await readJson(req, "chat");
      if (opts.upstream) return forwardChat(opts.upstream, raw, req, res);
      const body = parse(ChatCompletionCreateParamsSchema, raw, "body");
      if (body.priority !== undefined && body.priority !== 0) {
        throw chatError(
          400,
          "priority is not supported: this model does not use priority scheduling; send priority 0 or omit it.",
          "invalid_request_error",
        );
      }
      checkChatBounds(body);
      const params = resolveModelParams(body.model, caller);
      return serveChat(req, res, body as never, params, opts.drift);
    }

    if (rest[0] !== "preview") throw detail(404, `No route for ${method} ${url.pathname}.`);
    const r = rest.slice(1);
    if (method === "POST" && r.length === 1 && r[0] === "models") {
      const body = parse(ModelCreateParamsSchema, await readJson(req), "body");
      if (body.entity != null && !mayUse(caller, body.entity)) {
        throw detail(
          403,
          `This API key belongs to entity ${caller.entity} and cannot create models for entity ${body.entity}; send entity ${JSON.stringify(caller.entity)} or null.`,
        );
      }
      const owner = body.entity ?? caller.entity;
      const existing = store.findModel(owner, body.project, body.name);
      if (existing) {
        if (body.return_existing) return send(200, publicModel(existing));
        throw detail(
          409,
          `A model named ${body.name} already exists in project ${body.project}; pass return_existing: true to reuse it.`,
        );
      }
      const model = store.createModel({
        entity: owner,
        project: body.project,
        name: body.name,
        base_model: body.base_model,
      });
      return send(200, publicModel(model));
    }
    if (r[0] === "models" && r.length >= 2) {
      const id = pathId(r[1] as string, "model_id");
      if (method === "DELETE" && r.length === 2) {
        modelOr404(id, caller);
        const deleted = store.deleteModel(id);
        return send(200, { model_id: id, deleted_checkpoints: deleted, deleted_run: true });
      }
      if (r[2] === "checkpoints" && r.length === 3) {
        if (method === "GET") {
          const q = parse(CheckpointListParamsSchema, pageQuery(url, true), "query");
          modelOr404(id, caller);
          const desc = q.order === "desc";
          let cps = store.modelCheckpoints(id);
          if (desc) cps = [...cps].reverse();
          const p = page(cps, q.after, q.limit ?? 20, (after) => {
            const gone = store.tombstones.get(after);
            if (gone?.model_id !== id) return undefined;
            const next = cps.findIndex((c) => (desc ? c.step < gone.step : c.step > gone.step));
            return next === -1 ? cps.length : next;
          });
          return send(200, {
            ...p,
            data: p.data.map(({ id: cid, step, metrics }) => ({ id: cid, step, metrics })),
          });
        }
        if (method === "DELETE") {
          const body = parse(CheckpointDeleteParamsSchema, await readJson(req), "body");
          modelOr404(id, caller);
          const cps = store.modelCheckpoints(id);
          const notFound = body.steps.filter((s) => !cps.some((c) => c.step === s));
          const deleted = store.deleteCheckpoints(id, new Set(body.steps));
          return send(200, { deleted_count: deleted, not_found_steps: notFound });
        }
      }
      if (method === "POST" && r[2] === "log" && r.length === 3) {
        const raw = (await readJson(req)) as Record<string, unknown> | null;
        // ART sends model_id in the body too; it is not part of the schema.
        if (raw && typeof raw === "object") delete raw.model_id;
        const body = parse(LogParamsSchema, raw, "body");
        refuseFinishReasons(body.trajectory_groups);
        modelOr404(id, caller);
        const metrics = rewardMetrics(body.trajectory_groups);
        // As ART's history does, the split's metrics belong to the step they
        // were logged at: the latest checkpoint carries them (`val/reward`, ...),
        // over every group logged under the split at that step.
        const cp = store.latestCheckpoint(id);
        store.logs.push({
          id: randomUUID(),
          model_id: id,
          split: body.split,
          step: cp?.step ?? 0,
          trajectory_groups: body.trajectory_groups,
          metrics,
        });
        if (cp) refreshStepMetrics(store, id, body.split, cp.step);
        store.save();
        return send(200, { split: body.split, ...metrics });
      }
    }
    if (
      method === "POST" &&
      r.length === 1 &&
      (r[0] === "training-jobs" || r[0] === "sft-training-jobs")
    ) {
      const sft = r[0] === "sft-training-jobs";
      const body = parse(
        sft ? SFTTrainingJobCreateParamsSchema : TrainingJobCreateParamsSchema,
        await readJson(req),
        "body",
      );
      if (!sft) refuseFinishReasons((body as { trajectory_groups?: unknown }).trajectory_groups);
      if (!UUID.test(body.model_id)) {
        throw new HttpError(422, {
          detail: [
            {
              loc: ["body", "model_id"],
              msg: "Input should be a valid UUID",
              type: "uuid_parsing",
            },
          ],
        });
      }
      const model = modelOr404(body.model_id, caller);
      const job = store.createJob(sft ? "sft" : "rl", model, body);
      if (!sft) {
        // Its groups are rollouts of the latest step: that step's train metrics count them.
        const base = store.latestCheckpoint(model.id);
        if (base) {
          job.base_step = base.step;
          refreshStepMetrics(store, model.id, "train", base.step);
          store.save();
        }
      }
      startJob(job);
      return send(200, { id: job.id });
    }
    if (
      method === "GET" &&
      r[0] === "training-jobs" &&
      (r.length === 2 || (r.length === 3 && r[2] === "events"))
    ) {
      const id = pathId(r[1] as string, "training_job_id");
      if (r.length === 2) return send(200, publicJob(jobOr404(id, caller)));
      const q = parse(EventListParamsSchema, pageQuery(url, false), "query");
      jobOr404(id, caller);
      const events = store.events.filter((e) => e.job_id === id);
      const p = page(events, q.after, q.limit ?? 20);
      return send(200, {
        ...p,
        data: p.data.map(({ id: eid, type, data }) => ({ id: eid, type, data })),
      });
    }
    throw detail(404, `No route for ${method} ${url.pathname}.`);
  }

  const server = createServer((req, res) => {
    route(req, res).catch((error: unknown) => {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      const status = error instanceof HttpError ? error.status : 500;
      const body =
        error instanceof HttpError
          ? error.body
          : { detail: `Internal error: ${(error as Error).message}` };
      const headers = error instanceof HttpError ? error.headers : {};
      res.writeHead(status, { "content-type": "application/json", ...headers });
      res.end(JSON.stringify(body));
    });
  });

  return {
    server,
    async stop() {
      stopped = true;
      await Promise.allSettled([...running]);
    },
  };
}

/**
 * The components the contract's system check reports: `api`, `database`,
 * `cpu_queue`, `gpu_queue` (queues as success, duration and error). Here all
 * live in this process, so every check passes.
 */
function systemCheck() {
  const queue = { success: true, duration: 0, error: null };
  return { api: true, database: true, cpu_queue: queue, gpu_queue: { ...queue } };
}

function publicModel(m: {
  id: string;
  entity: string;
  project: string;
  name: string;
  base_model: string;
  run_id: string;
}) {
  return {
    id: m.id,
    entity: m.entity,
    project: m.project,
    name: m.name,
    base_model: m.base_model,
    run_id: m.run_id,
  };
}

function publicJob(j: StoredJob) {
  return {
    id: j.id,
    status: j.status,
    kind: j.kind,
    model_id: j.model_id,
    created_at: j.created_at,
    training_start: j.training_start,
    training_end: j.training_end,
    error_message: j.error_message,
    checkpoint_step: j.checkpoint_step,
  };
}

function requestUrl(req: IncomingMessage): URL {
  try {
    return new URL(req.url ?? "/", "http://localhost");
  } catch {
    throw detail(400, "The request target is not a valid URL path.");
  }
}
