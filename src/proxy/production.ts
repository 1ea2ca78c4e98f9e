// The proxy's production routes: sessions a deployed service opens (or
// names in a header), feedback by receipt id (with the control key, or with
// a signed URL a browser page holds), and trajectories read back with their
// feedback. Everything durable is the store's.
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import path from "node:path";
import { z } from "zod";
import { type RecordingEndpoint, type Route, SESSION_ID } from "../endpoint/index.js";
import type { Recorder } from "../recorder/index.js";
import {
  checkFeedbackAllowed,
  DEFAULT_TOKEN_FIELDS,
  FEEDBACK_FIELDS,
  FeedbackConflictError,
  type FeedbackGrant,
  FeedbackNotAllowedError,
  FeedbackNotFoundError,
  FeedbackTokenError,
  InvalidFeedbackError,
  type ProductionStore,
  parseFeedback,
  signFeedbackToken,
  verifyFeedbackToken,
} from "../store/index.js";
import { sendError, sendJson } from "../util/http.js";
import { fail, parsed, REFUSED, readJson } from "./control.js";

/** Signed feedback URLs, and the web pages allowed to use them. */
export interface FeedbackOptions {
  /**
   * The secret feedback URLs are signed with (at least 16 bytes). Default:
   * a random one kept in the store's directory (`feedback-secret`, readable
   * by its owner only), so URLs outlive a restart.
   */
  secret?: string;
  /** How long a signed URL works, in ms. Default 7 days. */
  urlTtlMs?: number;
  /**
   * Origins (`https://app.example`) whose pages may send feedback with a
   * signed URL (CORS). Default: none, so only same-origin pages and non-browser clients.
   */
  allowedOrigins?: readonly string[];
  /** How long feedback for a call still in flight waits for its record (ms). Default 30,000. */
  waitMs?: number;
}

/** What the production routes are made with. */
export interface ProductionInit {
  recorder: Recorder;
  endpoint: () => RecordingEndpoint;
  authorized: (req: IncomingMessage, res: ServerResponse) => boolean;
  hasKey: (req: IncomingMessage) => boolean;
  store?: ProductionStore;
  feedback?: FeedbackOptions;
  logger: { warn(message: string): void };
}

const OpenSessionRequest = z
  .object({
    /** The session's id; default: a new random one. */
    id: z.string().regex(SESSION_ID).optional(),
    metadata: z.record(z.string(), z.unknown()).optional(),
  })
  .strict();

const FeedbackUrlRequest = z
  .object({
    fields: z
      .array(z.enum(FEEDBACK_FIELDS as unknown as [string, ...string[]]))
      .min(1)
      .optional(),
    /** Seconds the URL works. */
    expires_in: z
      .number()
      .int()
      .positive()
      .max(365 * 24 * 3600)
      .optional(),
  })
  .strict();

const FEEDBACK_BODY_BYTES = 64 * 1024;
const DEFAULT_URL_TTL_MS = 7 * 24 * 3600 * 1000;

/** The production routes, and the secret signed URLs use. */
export function productionRoutes(init: ProductionInit): { routes: Route[] } {
  const { recorder, authorized, store } = init;
  const options = init.feedback ?? {};
  const origins = new Set(options.allowedOrigins ?? []);
  let secret: string | undefined = options.secret;

  const secretOf = async (): Promise<string> => {
    if (secret) return secret;
    if (!store) throw new Error("signed feedback URLs need a store or feedback.secret");
    // A store shared by several proxies (Redis) keeps the secret itself, so
    // a URL one proxy signed works on every other.
    if (store.feedbackSecret) {
      secret = await store.feedbackSecret();
      return secret;
    }
    if (!store.dir) throw new Error("signed feedback URLs need feedback.secret with this store");
    const file = path.join(store.dir, "feedback-secret");
    if (existsSync(file)) secret = readFileSync(file, "utf8").trim();
    else {
      secret = randomBytes(32).toString("base64url");
      mkdirSync(store.dir, { recursive: true });
      writeFileSync(file, secret, { mode: 0o600 });
    }
    return secret;
  };

  const needStore = (res: ServerResponse): ProductionStore | undefined => {
    if (!store)
      fail(
        res,
        503,
        "This proxy keeps no store: start it with a store (--store DIR) to take feedback and read trajectories back.",
        "no_store",
      );
    return store;
  };

  /** CORS headers for an allowed page's origin. */
  const cors = (req: IncomingMessage): Record<string, string> => {
    const origin = req.headers.origin;
    if (typeof origin !== "string" || !origins.has(origin)) return {};
    return { "access-control-allow-origin": origin, vary: "origin" };
  };

  /** The trajectory's record, waiting while a call of it is still being recorded. */
  const stored = async (id: string) => {
    const s = store as ProductionStore;
    await init.endpoint().recording.saved(id);
    if (await s.has(id)) return true;
    const deadline = Date.now() + (options.waitMs ?? 30_000);
    while (init.endpoint().recording.isPending(id) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20));
      if (await s.has(id)) return true;
    }
    return s.has(id);
  };

  const postFeedback = async (
    req: IncomingMessage,
    res: ServerResponse,
    query: URLSearchParams,
  ) => {
    const headers = cors(req);
    const s = store;
    if (!s) {
      sendError(
        res,
        503,
        "This proxy keeps no store: feedback needs one (--store DIR).",
        "invalid_request_error",
        "no_store",
      );
      return;
    }
    const token = query.get("token") ?? undefined;
    let grant: FeedbackGrant | undefined;
    // A page of another origin can send a "simple" request without asking
    // first (no preflight): what it may do is decided here, not by the browser.
    const origin = req.headers.origin;
    if (typeof origin === "string" && !origins.has(origin) && !sameOrigin(req, origin)) {
      sendFeedbackError(
        res,
        403,
        `Pages of ${origin.slice(0, 100)} may not send feedback here: the proxy's operator lists the allowed origins (feedback.allowedOrigins, --allow-origin).`,
        "origin_not_allowed",
        null,
        {},
      );
      return;
    }
    if (token !== undefined) {
      try {
        grant = verifyFeedbackToken(token, await secretOf());
      } catch (error) {
        if (!(error instanceof FeedbackTokenError)) throw error;
        sendFeedbackError(res, 403, error.message, "invalid_feedback_token", null, headers);
        return;
      }
    } else if (!init.hasKey(req)) {
      sendFeedbackError(
        res,
        401,
        "Feedback needs the proxy's key (Authorization: Bearer <apiKey>) or a signed feedback URL (?token=...).",
        "invalid_api_key",
        null,
        headers,
      );
      return;
    }
    const raw = await readJson(req, res, FEEDBACK_BODY_BYTES);
    if (raw === REFUSED) return;
    const body =
      grant && isPlain(raw) && raw.trajectory_id === undefined
        ? { ...raw, trajectory_id: grant.trajectoryId }
        : raw;
    try {
      const input = parseFeedback(body);
      if (grant) checkFeedbackAllowed(input, grant);
      if (!(await stored(input.trajectory_id)))
        throw new FeedbackNotFoundError(input.trajectory_id);
      const { feedback, created } = await s.addFeedback(input);
      sendJson(res, created ? 201 : 200, { created, feedback }, headers);
    } catch (error) {
      if (error instanceof InvalidFeedbackError) {
        const issues = (error as { issues?: Array<{ path: string; message: string }> }).issues;
        sendFeedbackError(
          res,
          400,
          error.message,
          "invalid_body",
          (error as { field?: string }).field ?? issues?.[0]?.path ?? null,
          headers,
        );
      } else if (error instanceof FeedbackNotAllowedError)
        sendFeedbackError(
          res,
          403,
          error.message,
          "field_not_allowed",
          (error as { field?: string }).field ?? null,
          headers,
        );
      else if (error instanceof FeedbackNotFoundError)
        sendFeedbackError(
          res,
          404,
          error.message,
          "trajectory_not_found",
          "trajectory_id",
          headers,
        );
      else if (error instanceof FeedbackConflictError)
        sendFeedbackError(
          res,
          409,
          error.message,
          "idempotency_conflict",
          (error as { field?: string }).field ?? null,
          headers,
        );
      else throw error;
    }
  };

  const routes: Route[] = [
    {
      method: "POST",
      path: "/v1/feedback",
      handle: ({ req, res, query }) => postFeedback(req, res, query),
    },
    {
      method: "OPTIONS",
      path: "/v1/feedback",
      handle: ({ req, res }) => {
        const headers = cors(req);
        if (!headers["access-control-allow-origin"]) {
          sendError(
            res,
            403,
            "This origin may not send feedback here: the proxy's operator lists the allowed origins (feedback.allowedOrigins, --allow-origin).",
            "invalid_request_error",
            "origin_not_allowed",
          );
          return;
        }
        res.writeHead(204, {
          ...headers,
          "access-control-allow-methods": "POST",
          "access-control-allow-headers": "content-type",
          "access-control-max-age": "600",
        });
        res.end();
      },
    },
    {
      method: "GET",
      path: "/v1/trajectories/:id",
      handle: async ({ req, res, params }) => {
        if (!authorized(req, res)) return;
        const s = needStore(res);
        if (!s) return;
        const id = params.id as string;
        await stored(id);
        const record = await s.get(id);
        if (!record) {
          fail(
            res,
            404,
            `No trajectory ${JSON.stringify(id)} in the store: it was never recorded, or was dropped by the store's bounds.`,
            "trajectory_not_found",
            "id",
          );
          return;
        }
        sendJson(res, 200, record);
      },
    },
    {
      method: "GET",
      path: "/v1/trajectories",
      handle: async ({ req, res, query }) => {
        if (!authorized(req, res)) return;
        const s = needStore(res);
        if (!s) return;
        const limit = Number(query.get("limit") ?? 100);
        const session = query.get("session") ?? undefined;
        const eligible = query.get("eligible");
        sendJson(res, 200, {
          data: await s.list({
            limit: Number.isInteger(limit) && limit > 0 ? Math.min(limit, 1000) : 100,
            ...(session ? { session } : {}),
            ...(eligible === "true" || eligible === "false"
              ? { eligible: eligible === "true" }
              : {}),
          }),
        });
      },
    },
    {
      method: "POST",
      path: "/v1/trajectories/:id/feedback-url",
      handle: async ({ req, res, params }) => {
        if (!authorized(req, res)) return;
        const raw = await readJson(req, res);
        if (raw === REFUSED) return;
        const r = parsed(res, FeedbackUrlRequest, raw);
        if (!r) return;
        const s = needStore(res);
        if (!s) return;
        const id = params.id as string;
        if (!(await stored(id))) {
          fail(
            res,
            404,
            `No trajectory ${JSON.stringify(id)} in the store.`,
            "trajectory_not_found",
            "id",
          );
          return;
        }
        const expiresAt =
          Date.now() +
          (r.expires_in ? r.expires_in * 1000 : (options.urlTtlMs ?? DEFAULT_URL_TTL_MS));
        const token = signFeedbackToken({
          trajectoryId: id,
          fields: (r.fields ?? DEFAULT_TOKEN_FIELDS) as never,
          expiresAt,
          secret: await secretOf(),
        });
        sendJson(res, 201, {
          url: `${init.endpoint().url}/v1/feedback?token=${token}`,
          token,
          trajectory_id: id,
          expires_at: new Date(expiresAt).toISOString(),
        });
      },
    },
    {
      method: "POST",
      path: "/v1/sessions",
      handle: async ({ req, res }) => {
        if (!authorized(req, res)) return;
        const raw = await readJson(req, res);
        if (raw === REFUSED) return;
        const r = parsed(res, OpenSessionRequest, raw);
        if (!r) return;
        const id = r.id ?? `ses_${randomBytes(12).toString("hex")}`;
        const handle = recorder.session(id, { metadata: r.metadata });
        const key = init.endpoint().recording.openSessionKey(id);
        sendJson(res, 201, {
          id,
          trajectory_id: handle.id,
          base_url: init.endpoint().baseURL,
          anthropic_base_url: init.endpoint().url,
          api_key: key,
        });
      },
    },
    {
      method: "GET",
      path: "/v1/sessions/:id",
      handle: ({ req, res, params }) => {
        if (!authorized(req, res)) return;
        const handle = recorder.getSession(params.id as string);
        if (!handle) {
          fail(
            res,
            404,
            `No open session ${JSON.stringify(params.id)}: it was never opened, or it ended (read its trajectory with GET /v1/trajectories/{id}).`,
            "session_not_found",
            "id",
          );
          return;
        }
        sendJson(res, 200, {
          id: handle.session,
          trajectory_id: handle.id,
          status: "open",
          calls: handle.calls,
          trajectory: handle.trajectory.toJSON(),
        });
      },
    },
    {
      method: "POST",
      path: "/v1/sessions/:id/end",
      handle: ({ req, res, params }) => {
        if (!authorized(req, res)) return;
        const handle = recorder.getSession(params.id as string);
        const t = recorder.endSession(params.id as string);
        if (!handle || !t) {
          fail(
            res,
            404,
            `No open session ${JSON.stringify(params.id)}.`,
            "session_not_found",
            "id",
          );
          return;
        }
        sendJson(res, 200, {
          id: handle.session,
          trajectory_id: handle.id,
          status: "finished",
          calls: handle.calls,
          trajectory: t.toJSON(),
        });
      },
    },
  ];
  return { routes };
}

/** Whether `origin` is the proxy's own (a page it served itself). */
function sameOrigin(req: IncomingMessage, origin: string): boolean {
  const host = req.headers.host;
  return typeof host === "string" && (origin === `http://${host}` || origin === `https://${host}`);
}

function isPlain(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function sendFeedbackError(
  res: ServerResponse,
  status: number,
  message: string,
  code: string,
  param: string | null,
  headers: Record<string, string>,
): void {
  for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
  sendError(res, status, message, "invalid_request_error", code, param);
}
