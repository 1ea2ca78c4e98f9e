/**
 * The Training Service on loopback, with a small policy that really trains: for tests, demos and
 * working offline.
 *
 * @packageDocumentation
 * @module trajectory-recorder/emulator
 */
// The local emulator of the Training Service: `startEmulator()` serves the
// whole API on loopback, with a small policy that really trains.
import { readFile } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { errorMessage } from "../util/error-message.js";
import { isLoopbackHost, parseApiKeys } from "./host-keys.js";
import { DEFAULT_MAX_BODY_BYTES } from "./limits.js";
import { checkEmulatorOptions } from "./options.js";
import { buildServer } from "./server.js";
import {
  checkSftDataDir,
  DEFAULT_TRAINING_DATA_MAX_BYTES,
  DEFAULT_TRAINING_DATA_TIMEOUT_MS,
  type TrainingDataAccess,
} from "./sft-data.js";
import { Store } from "./store.js";
import { type DriftOptions, driftOf } from "./template.js";
import { checkUpstream } from "./upstream.js";

export type { DriftOptions };
export { isLoopbackHost, parseApiKeys };

/** Options of {@link startEmulator}. */
export interface EmulatorOptions {
  /** TCP port; 0 (the default) picks a free one. */
  port?: number;
  /** Host to bind; default `127.0.0.1`. */
  host?: string;
  /**
   * Accepted bearer keys: a list (each key's entity is `"local"`) or a map from
   * key to entity. When omitted, any non-empty key is accepted as entity `"local"`.
   */
  apiKeys?: string[] | Record<string, string>;
  /**
   * A file of accepted keys, added to `apiKeys`: one `KEY` or `KEY ENTITY` per
   * line (see {@link parseApiKeys}), so keys need not appear in a command line.
   *
   * @example
   * await startEmulator({ apiKeysFile: "/run/secrets/emulator-keys" });
   */
  apiKeysFile?: string;
  /** Directory where state survives restarts; in memory when omitted. */
  dataDir?: string;
  /** Base URL of an OpenAI-compatible server (ending in `/v1`) to forward chat completions (and Responses requests) to. */
  upstream?: string;
  /**
   * Largest request body read, in bytes; a larger one answers 413 without
   * being read further. Default 64 MiB (a group of 80 completions of 500
   * tokens with top-5 logprobs is about 20 MB).
   */
  maxBodyBytes?: number;
  /**
   * Directory an SFT job's `file://` `training_data_url` may point into
   * (symlinks are followed, and must stay inside). Default: none, so file URLs
   * are refused: the emulator never reads a local file a caller names unless
   * the operator chose where. Files above 64 MiB are refused.
   *
   * @example
   * await startEmulator({ sftDataDir: "./artifacts" }); // with new LocalFileUploader("./artifacts")
   */
  sftDataDir?: string;
  /**
   * Lets SFT jobs fetch an `http(s)://` `training_data_url`. Default `false`:
   * such URLs are refused, since the emulator would fetch whatever a caller
   * names, its own network included. `true` or an object turns fetching on:
   * no redirects are followed, a body above `maxBytes` (default 64 MiB) or an
   * answer slower than `timeoutMs` (default 30 s) fails the job.
   *
   * @example
   * await startEmulator({ fetchTrainingData: { maxBytes: 8 * 1024 * 1024, timeoutMs: 10_000 } });
   */
  fetchTrainingData?: boolean | { maxBytes?: number; timeoutMs?: number };
  /**
   * Makes the chat template re-render earlier turns as many real ones do, so
   * a later prompt no longer extends the tokens sampled before it (a
   * recorder then splits the history there; see docs/emulator.md):
   * `reasoning` opens each generation prompt with an empty reasoning block
   * (`<think> </think>`, as Qwen3 with thinking off) that earlier turns are
   * rendered without, and strips reasoning from earlier assistant turns;
   * `toolArguments` renders earlier tool calls' arguments as canonical JSON
   * (keys sorted, punctuation as tokens). `true`: both. Default `false`:
   * turns are rendered back exactly as sampled.
   *
   * @example
   * await startEmulator({ drift: { reasoning: true } });
   */
  drift?: boolean | DriftOptions;
  /**
   * Hears warnings: listening on a host other machines can reach while any key
   * is accepted, or a failed write of the state to `dataDir`. Default `console.warn`.
   */
  onWarning?: (message: string) => void;
}

/** A running emulator. */
export interface Emulator {
  /** Base URL ending in `/v1`, ready to use as `baseURL`. */
  url: string;
  port: number;
  /** Stops background jobs, closes every connection and flushes the data directory. */
  close(): Promise<void>;
}

/**
 * Starts the emulator of the Training Service.
 *
 * @example
 * import { startEmulator } from "trajectory-recorder/emulator";
 * const emu = await startEmulator({ port: 0, apiKeys: ["test-key"] });
 * const client = new OpenAI({ baseURL: emu.url, apiKey: "test-key" });
 * // ...
 * await emu.close();
 */
export async function startEmulator(options: EmulatorOptions = {}): Promise<Emulator> {
  checkEmulatorOptions(options);
  checkUpstream(options.upstream);
  const warn = options.onWarning ?? console.warn;
  await checkSftDataDir(options.sftDataDir, warn);
  const keys = await acceptedKeys(options);
  const store = await Store.open(options.dataDir, warn);
  const { server, stop } = buildServer({
    store,
    keys,
    upstream: options.upstream,
    maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    trainingData: trainingDataAccess(options),
    drift: driftOf(options.drift),
  });
  const host = options.host ?? "127.0.0.1";
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  if (!keys && !isLoopbackHost(host)) {
    warn(
      `The emulator listens on ${host}, which other machines can reach, and accepts any API key: anyone who can connect may use it. Pass apiKeys or apiKeysFile, or listen on 127.0.0.1.`,
    );
  }
  const shownHost = host.includes(":") ? `[${host}]` : host === "0.0.0.0" ? "127.0.0.1" : host;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${shownHost}:${port}/v1`,
    port,
    close() {
      closing ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeAllConnections();
        await stop();
        await closed;
        await store.flush();
      })();
      return closing;
    },
  };
}

function trainingDataAccess(options: EmulatorOptions): TrainingDataAccess {
  const f = options.fetchTrainingData;
  const fetchOptions = typeof f === "object" ? f : {};
  return {
    dir: options.sftDataDir,
    fetch:
      f === true || typeof f === "object"
        ? {
            maxBytes: fetchOptions.maxBytes ?? DEFAULT_TRAINING_DATA_MAX_BYTES,
            timeoutMs: fetchOptions.timeoutMs ?? DEFAULT_TRAINING_DATA_TIMEOUT_MS,
          }
        : undefined,
    maxFileBytes: DEFAULT_TRAINING_DATA_MAX_BYTES,
  };
}

async function acceptedKeys(options: EmulatorOptions): Promise<Map<string, string> | undefined> {
  const keys = new Map<string, string>(
    Array.isArray(options.apiKeys)
      ? options.apiKeys.map((k) => [k, "local"])
      : Object.entries(options.apiKeys ?? {}),
  );
  if (options.apiKeysFile !== undefined) {
    let text: string;
    try {
      text = await readFile(options.apiKeysFile, "utf8");
    } catch (error) {
      throw new Error(
        `apiKeysFile ${options.apiKeysFile} could not be read: ${errorMessage(error)}`,
      );
    }
    const fromFile = parseApiKeys(text, `apiKeysFile ${options.apiKeysFile}`);
    if (Object.keys(fromFile).length === 0)
      throw new Error(`apiKeysFile ${options.apiKeysFile} holds no key.`);
    for (const [key, entity] of Object.entries(fromFile)) keys.set(key, entity);
  }
  return options.apiKeys === undefined && options.apiKeysFile === undefined ? undefined : keys;
}
