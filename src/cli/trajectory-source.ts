// Where `sessions` and `feedback` find production trajectories: a store's
// directory (`--store DIR`, opened here while no proxy runs on it) or a
// running proxy (`--proxy URL`, its control API with $PROXY_CONTROL_KEY).
// Both answer with the store's own shapes, so the commands print one way.
import { existsSync, statSync } from "node:fs";
import {
  FeedbackConflictError,
  type FeedbackInput,
  FeedbackNotFoundError,
  type FeedbackRecord,
  InvalidFeedbackError,
  type StoredTrajectory,
  StoreLockedError,
  TrajectoryStore,
  type TrajectorySummary,
} from "../store/index.js";
import { errorMessage } from "../util/error-message.js";
import { str, type Values } from "./args.js";
import { defaultStoreDir } from "./commands/proxy.js";
import { InvalidDataError, NotFoundCliError, UsageError, withoutCredentials } from "./context.js";

/** What the commands ask of a store or a proxy. */
export interface TrajectorySource {
  /** Where it is, as the commands print it. */
  readonly where: string;
  list(filter: { limit: number; session?: string }): Promise<TrajectorySummary[]>;
  get(id: string): Promise<StoredTrajectory | undefined>;
  addFeedback(input: FeedbackInput): Promise<{ feedback: FeedbackRecord; created: boolean }>;
  close(): Promise<void>;
}

/** The options both commands take, for their help. */
export const SOURCE_OPTIONS = {
  store: { type: "string" },
  proxy: { type: "string" },
} as const;

export const SOURCE_HELP = `  --store DIR            the store's directory, read directly, as the proxy's
                         --store (default: store/ in the state directory,
                         $TRAJECTORY_RECORDER_STATE_DIR or ~/.local/state/trajectory-recorder);
                         only while no proxy runs on it: then use --proxy
  --proxy URL            a running recording proxy's root URL, e.g.
                         http://127.0.0.1:8400 ($PROXY_CONTROL_KEY is its control key)`;

/** The source the options name: --proxy, --store, or the default store. */
export async function openSource(values: Values): Promise<TrajectorySource> {
  const proxy = str(values, "proxy");
  const store = str(values, "store");
  if (proxy !== undefined && store !== undefined)
    throw new UsageError(
      "give either --store DIR or --proxy URL, not both (a running proxy reads its own store).",
    );
  if (proxy !== undefined) return proxySource(proxy);
  return storeSource(store ?? defaultStoreDir(), store === undefined);
}

/**
 * Opens the store in `dir` (named `flag` in errors) while no proxy holds it;
 * `whenLocked` says what to do instead when one does.
 */
export async function openStoreDir(
  dir: string,
  named: string,
  flag: string,
  whenLocked: string,
): Promise<TrajectoryStore> {
  if (!existsSync(dir))
    throw new UsageError(
      `${named} does not exist: give ${flag} the directory a proxy was started with (--store DIR), or --proxy URL for a running proxy.`,
    );
  if (!statSync(dir).isDirectory())
    throw new UsageError(`${named} is not a directory: ${flag} takes the store's directory.`);
  try {
    return await TrajectoryStore.open({ dir, logger: { warn: () => {} } });
  } catch (error) {
    if (StoreLockedError.isInstance(error))
      throw new UsageError(
        `the store at ${dir} is in use${error.pid === null ? "" : ` by process ${error.pid}`} (a running proxy holds its lock): ${whenLocked}`,
      );
    throw error;
  }
}

async function storeSource(dir: string, isDefault: boolean): Promise<TrajectorySource> {
  const named = isDefault ? `the default store directory ${dir}` : `--store ${dir}`;
  const store = await openStoreDir(
    dir,
    named,
    "--store",
    "read it and send feedback through that proxy with --proxy URL instead of --store.",
  );
  return {
    where: dir,
    list: async (filter) => store.list(filter),
    get: async (id) => store.get(id),
    addFeedback: async (input) => {
      try {
        return store.addFeedback(input);
      } catch (error) {
        throw asCliError(error);
      }
    },
    close: () => store.close(),
  };
}

function proxySource(url: string): TrajectorySource {
  if (!/^https?:\/\/[^/]/.test(url))
    throw new UsageError(
      `--proxy must be the http:// or https:// root URL of a running recording proxy (as it prints on start); got ${JSON.stringify(url)}.`,
    );
  if (withoutCredentials(url) !== url)
    throw new UsageError(
      "--proxy holds a user name or password; the proxy takes its control key from $PROXY_CONTROL_KEY, so give the URL without them.",
    );
  const root = url.replace(/\/+$/, "").replace(/\/v1$/, "");
  const key = process.env.PROXY_CONTROL_KEY?.trim();
  const call = async (method: string, route: string, body?: unknown) => {
    let res: Response;
    try {
      res = await fetch(`${root}${route}`, {
        method,
        headers: {
          ...(key ? { authorization: `Bearer ${key}` } : {}),
          ...(body === undefined ? {} : { "content-type": "application/json" }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (error) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      throw new Error(
        `could not reach the proxy at ${root} (${cause?.code ?? cause?.message ?? errorMessage(error)}): is it running there?`,
      );
    }
    const text = await res.text();
    let json: unknown;
    try {
      json = text === "" ? undefined : JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: res.status, json, text };
  };
  const refusal = (status: number, json: unknown, text: string, what: string): Error => {
    const error = (json as { error?: { message?: string; param?: string | null } } | undefined)
      ?.error;
    const said = error?.message ?? (text.slice(0, 200) || "no body");
    if (status === 401)
      return new UsageError(
        `the proxy at ${root} refused the control key: set $PROXY_CONTROL_KEY to the key it was started with (--control-key-file or its $PROXY_CONTROL_KEY).`,
      );
    if (status === 404) return new NotFoundCliError(said);
    if (status === 409) return new Error(`the proxy refused ${what}: ${said}`);
    if (status === 400) return new InvalidDataError(`the proxy refused ${what}: ${said}`);
    if (status === 503) return new Error(`the proxy at ${root} cannot ${what}: ${said}`);
    return new Error(`the proxy answered ${status} to ${what}: ${said}`);
  };
  return {
    where: root,
    list: async ({ limit, session }) => {
      const query = new URLSearchParams({ limit: String(limit) });
      if (session !== undefined) query.set("session", session);
      const r = await call("GET", `/v1/trajectories?${query}`);
      if (r.status !== 200) throw refusal(r.status, r.json, r.text, "list trajectories");
      return (r.json as { data: TrajectorySummary[] }).data;
    },
    get: async (id) => {
      const r = await call("GET", `/v1/trajectories/${encodeURIComponent(id)}`);
      if (r.status === 404) return undefined;
      if (r.status !== 200) throw refusal(r.status, r.json, r.text, `read trajectory ${id}`);
      return r.json as StoredTrajectory;
    },
    addFeedback: async (input) => {
      const r = await call("POST", "/v1/feedback", input);
      if (r.status !== 200 && r.status !== 201)
        throw refusal(r.status, r.json, r.text, "the feedback");
      return r.json as { feedback: FeedbackRecord; created: boolean };
    },
    close: async () => {},
  };
}

/** The store's feedback errors as the CLI's: 404 → exit 4, a bad field → exit 3. */
function asCliError(error: unknown): unknown {
  if (FeedbackNotFoundError.isInstance(error)) return new NotFoundCliError(errorMessage(error));
  if (InvalidFeedbackError.isInstance(error)) return new InvalidDataError(errorMessage(error));
  if (FeedbackConflictError.isInstance(error))
    return new Error(`the store refused the feedback: ${errorMessage(error)}`);
  return error;
}

/**
 * A trajectory by its id, or else the newest trajectory of the session of
 * that id; undefined when neither exists.
 */
export async function findTrajectory(
  source: TrajectorySource,
  id: string,
): Promise<{ record: StoredTrajectory; others: number } | undefined> {
  const byId = await source.get(id);
  if (byId) return { record: byId, others: 0 };
  const [newest, ...older] = await source.list({ limit: 1000, session: id });
  if (!newest) return undefined;
  const record = await source.get(newest.id);
  return record ? { record, others: older.length } : undefined;
}
