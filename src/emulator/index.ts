// The local emulator of the Training Service: `startEmulator()` serves the
// whole API on loopback, with a small policy that really trains.
import type { AddressInfo } from "node:net";
import { buildServer } from "./server.js";
import { Store } from "./store.js";
import { checkUpstream } from "./upstream.js";

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
  /** Directory where state survives restarts; in memory when omitted. */
  dataDir?: string;
  /** Base URL of an OpenAI-compatible server (ending in `/v1`) to forward chat completions to. */
  upstream?: string;
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
  checkUpstream(options.upstream);
  const store = await Store.open(options.dataDir);
  let keys: Map<string, string> | undefined;
  if (Array.isArray(options.apiKeys)) keys = new Map(options.apiKeys.map((k) => [k, "local"]));
  else if (options.apiKeys) keys = new Map(Object.entries(options.apiKeys));
  const { server, stop } = buildServer({ store, keys, upstream: options.upstream });
  const host = options.host ?? "127.0.0.1";
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
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
