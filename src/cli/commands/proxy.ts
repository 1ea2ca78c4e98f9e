// `proxy`: the standalone recording proxy (docs/proxy.md). Keys come from
// files or the environment, so none appears in `ps`; none is ever printed.
import { readFileSync } from "node:fs";
import path from "node:path";
import type { RedisTrajectoryStore } from "../../integrations/bullmq/index.js";
import { startRecordingProxy } from "../../proxy/index.js";
import { TrajectoryStore } from "../../store/index.js";
import { TrainableModel } from "../../training/index.js";
import { numberOption, parse, str } from "../args.js";
import { type Command, makeClient, UsageError } from "../context.js";
import { knownFilePath } from "../known-file.js";

/** The store's directory when none is given: `store/` in the CLI's state directory. */
export function defaultStoreDir(): string {
  return path.join(path.dirname(knownFilePath()), "store");
}

function keyFrom(file: string | undefined, env: string, option: string): string | undefined {
  if (file !== undefined) {
    try {
      return readFileSync(file, "utf8").trim();
    } catch (error) {
      throw new UsageError(`${option} ${file} could not be read: ${(error as Error).message}`);
    }
  }
  const value = process.env[env]?.trim();
  return value ? value : undefined;
}

export const proxy: Command = {
  name: "proxy",
  summary: "record any agent (any language, any process) through an OpenAI-compatible endpoint",
  usage:
    "(--upstream URL | --model PROJECT/NAME --base-model MODEL) [--port 8400] [--host 127.0.0.1]",
  details: `Options:
  --upstream URL         forward chat completions to this OpenAI-compatible /v1 server
                         ($PROXY_UPSTREAM_API_KEY is its bearer key)
  --upstream-model NAME  the model a request with model "" gets (with --upstream)
  --model PROJECT/NAME   forward to this model's latest checkpoint on the Training
                         Service (registered if new; the service options below),
                         and let POST /train train it
  --base-model MODEL     the base model, with --model
  --port N               TCP port (default 8400; 0 picks a free one)
  --host HOST            address to listen on (default 127.0.0.1)
  --allow-remote         let --host be an address other machines can reach
                         (then the control API needs a key)
  --public-url URL       the root URL agents are given (base_url is it plus /v1),
                         when they reach the proxy by another address (default:
                         the listening address; 0.0.0.0 is given as 127.0.0.1)
  --control-key-file P   the control API's key ($PROXY_CONTROL_KEY otherwise)
  --max-body-bytes N     largest chat request body read (default 32 MiB)
  --timeout-ms N         the upstream's deadline per call (default 600000)
  --max-upstream-connections N
                         the most connections open to the upstream at once (default 256)
  --store DIR            where sessions, rollouts and feedback are kept on disk
                         (default: store/ in the state directory,
                         $TRAJECTORY_RECORDER_STATE_DIR or ~/.local/state/trajectory-recorder)
  --store redis://HOST:PORT[/DB]  keep them in Redis instead (rediss:// for TLS),
                         shared by every proxy and worker on it (needs bullmq)
  --store-prefix P       the Redis store's key prefix (default trajectory-recorder:store)
  --no-store             keep nothing on disk (no feedback, sessions in memory)
  --store-max-bytes N    the store's size bound (default 1 GiB; oldest
                         unrewarded trajectories are dropped first, said in the log)
  --session-idle-ms N    a session with no call for this long ends (default 1800000)
  --feedback-secret-file P  the secret signed feedback URLs use
                         ($PROXY_FEEDBACK_SECRET; default: one kept in the store)
  --allow-origin ORIGIN  a web page origin that may send feedback with a
                         signed URL (CORS); repeat for more

Agents get a base URL and a key per rollout from POST /rollouts; the HTTP API
(rollouts, rewards, groups, training) is described in docs/proxy.md. A deployed
agent names its session with the x-trajectory-session header instead; every
recorded answer carries x-trajectory-id, the id POST /v1/feedback takes
(docs/production.md).`,
  async run(args, out) {
    const { values } = parse(
      args,
      {
        upstream: { type: "string" },
        "upstream-model": { type: "string" },
        model: { type: "string" },
        "base-model": { type: "string" },
        port: { type: "string" },
        host: { type: "string" },
        "allow-remote": { type: "boolean" },
        "public-url": { type: "string" },
        "control-key-file": { type: "string" },
        "max-body-bytes": { type: "string" },
        "timeout-ms": { type: "string" },
        "max-upstream-connections": { type: "string" },
        store: { type: "string" },
        "no-store": { type: "boolean" },
        "store-max-bytes": { type: "string" },
        "store-prefix": { type: "string" },
        "session-idle-ms": { type: "string" },
        "feedback-secret-file": { type: "string" },
        "allow-origin": { type: "string", multiple: true },
      },
      { min: 0, max: 0, names: "" },
    );
    const upstreamURL = str(values, "upstream");
    const modelRef = str(values, "model");
    if ((upstreamURL === undefined) === (modelRef === undefined))
      throw new UsageError("give either --upstream URL or --model PROJECT/NAME (one of them).");
    if (upstreamURL !== undefined && !/^https?:\/\/[^/]/.test(upstreamURL))
      throw new UsageError(
        `--upstream must be the http:// or https:// base URL of an OpenAI-compatible server, ending in /v1; got ${JSON.stringify(upstreamURL)}.`,
      );
    const port = numberOption("port", str(values, "port") ?? "8400", {
      integer: true,
      min: 0,
    }) as number;
    if (port > 65535) throw new UsageError(`--port must be at most 65535; got ${port}.`);
    const maxBodyBytes = numberOption("max-body-bytes", str(values, "max-body-bytes"), {
      integer: true,
      positive: true,
    });
    const timeoutMs = numberOption("timeout-ms", str(values, "timeout-ms"), {
      integer: true,
      positive: true,
    });
    const maxUpstreamConnections = numberOption(
      "max-upstream-connections",
      str(values, "max-upstream-connections"),
      { integer: true, positive: true },
    );
    let upstream: Parameters<typeof startRecordingProxy>[0]["upstream"];
    if (modelRef !== undefined) {
      const [project, name, ...rest] = modelRef.split("/");
      const baseModel = str(values, "base-model");
      if (!project || !name || rest.length > 0)
        throw new UsageError(`--model must be PROJECT/NAME; got ${JSON.stringify(modelRef)}.`);
      if (!baseModel)
        throw new UsageError("--model needs --base-model (the model it trains from).");
      upstream = await TrainableModel.register(makeClient(values), { project, name, baseModel });
    } else {
      upstream = {
        baseURL: upstreamURL as string,
        apiKey: process.env.PROXY_UPSTREAM_API_KEY?.trim() || undefined,
        model: str(values, "upstream-model"),
      };
    }
    const host = str(values, "host") ?? "127.0.0.1";
    const storeMaxBytes = numberOption("store-max-bytes", str(values, "store-max-bytes"), {
      integer: true,
      positive: true,
    });
    const idleMs = numberOption("session-idle-ms", str(values, "session-idle-ms"), {
      integer: true,
      positive: true,
    });
    if (values["no-store"] === true && str(values, "store") !== undefined)
      throw new UsageError("give --store DIR or --no-store, not both.");
    const warn = (m: string) => out.stderr.write(`warning: ${m}\n`);
    const storeDir =
      values["no-store"] === true ? undefined : (str(values, "store") ?? defaultStoreDir());
    const prefix = str(values, "store-prefix");
    if (prefix !== undefined && !isRedisUrl(storeDir))
      throw new UsageError("--store-prefix goes with --store redis://HOST:PORT.");
    const opened = storeDir
      ? await openStore(storeDir, {
          ...(storeMaxBytes ? { maxBytes: storeMaxBytes as number } : {}),
          ...(prefix ? { prefix } : {}),
          logger: { warn },
        })
      : undefined;
    const store = opened?.store;
    const origins = values["allow-origin"];
    let running: Awaited<ReturnType<typeof startRecordingProxy>>;
    try {
      running = await startRecordingProxy({
        upstream,
        host,
        port,
        allowRemote: values["allow-remote"] === true,
        publicURL: str(values, "public-url"),
        apiKey: keyFrom(str(values, "control-key-file"), "PROXY_CONTROL_KEY", "--control-key-file"),
        maxBodyBytes: maxBodyBytes as number | undefined,
        timeoutMs: timeoutMs as number | undefined,
        maxUpstreamConnections: maxUpstreamConnections as number | undefined,
        logger: { warn },
        store,
        sessions: idleMs ? { idleTimeoutMs: idleMs as number } : undefined,
        feedback: {
          secret: keyFrom(
            str(values, "feedback-secret-file"),
            "PROXY_FEEDBACK_SECRET",
            "--feedback-secret-file",
          ),
          allowedOrigins: Array.isArray(origins) ? origins : [],
        },
      });
    } catch (error) {
      await store?.close();
      if (error instanceof TypeError) throw new UsageError(error.message);
      throw error;
    }
    out.stdout.write(
      [
        `Recording proxy listening on ${running.url}`,
        `  control API: POST ${running.url}/rollouts -> { id, base_url, api_key }`,
        `  agents:      OPENAI_BASE_URL=${running.baseURL} OPENAI_API_KEY=<the rollout's api_key>`,
        `  sessions:    x-trajectory-session: <id> with the control key; receipts in x-trajectory-id`,
        `  store:       ${opened?.where ?? "none (--no-store)"}`,
        `  forwarding to ${modelRef ? `the latest checkpoint of ${modelRef}` : upstreamURL}`,
        "",
      ].join("\n"),
    );
    const shutdown = () => {
      running
        .close()
        .then(() => store?.close())
        .then(() => process.exit(0));
    };
    process.once("SIGINT", shutdown);
    process.once("SIGTERM", shutdown);
    return -1;
  },
};

const isRedisUrl = (value: string | undefined) =>
  value !== undefined && /^rediss?:\/\//.test(value);

/** Opens the store `--store` names: a directory, or a Redis URL. */
async function openStore(
  where: string,
  options: { maxBytes?: number; prefix?: string; logger: { warn(m: string): void } },
): Promise<{ store: TrajectoryStore | RedisTrajectoryStore; where: string }> {
  if (!isRedisUrl(where)) {
    const { prefix: _prefix, ...disk } = options;
    return { store: await TrajectoryStore.open({ dir: where, ...disk }), where };
  }
  let bullmq: typeof import("../../integrations/bullmq/index.js");
  try {
    bullmq = await import("../../integrations/bullmq/index.js");
  } catch (error) {
    throw new UsageError(
      `--store redis:// needs the bullmq package (and its ioredis): npm install bullmq (${(error as Error).message}).`,
    );
  }
  const store = await bullmq.RedisTrajectoryStore.open({
    connection: where,
    ...options,
  });
  return { store, where: `redis ${store.where} (prefix ${store.prefix})` };
}
