// The recording endpoint as the recorder runs it behind `t.baseURL`: the one
// server with the recording routes, and more routes for whoever adds them
// (the standalone proxy adds its control API, sessions and feedback).
import type { EndpointRollout } from "./host.js";
import { type RecordingInit, RecordingRoutes } from "./recording.js";
import { EndpointServer, type Route } from "./server.js";

/**
 * An OpenAI-compatible server that records each call into the rollout (or
 * session) its key names. Started once; `close()` stops it.
 */
export class RecordingEndpoint {
  readonly server: EndpointServer;
  readonly recording: RecordingRoutes;
  readonly #publicURL: string | undefined;

  constructor(init: RecordingInit, routes: readonly Route[] = []) {
    this.#publicURL = init.options.publicURL;
    this.recording = new RecordingRoutes(init);
    this.server = new EndpointServer({
      host: init.options.host,
      port: init.options.port,
      logger: init.options.logger,
      redact: this.recording.redact,
    });
    this.server.add(routes).add(this.recording.routes()).setFallback(this.recording.fallback);
  }

  /** Listens (once); later calls wait for the same start. */
  start(): Promise<void> {
    return this.server.start();
  }

  /**
   * The root URL agents are given, e.g. `http://127.0.0.1:8400`: the
   * endpoint's `publicURL`, else the listening address (an unspecified
   * one, `0.0.0.0` or `::`, given as loopback).
   */
  get url(): string {
    const listening = this.server.url;
    if (this.#publicURL) return this.#publicURL;
    return listening.replace(/^http:\/\/(0\.0\.0\.0|\[::\])(?=:)/, (_, h: string) =>
      h === "0.0.0.0" ? "http://127.0.0.1" : "http://[::1]",
    );
  }

  /** The base URL agents use, ending in `/v1`. Throws before {@link start} has finished. */
  get baseURL(): string {
    return `${this.url}/v1`;
  }

  /** Whether the server is listening. */
  get listening(): boolean {
    return this.server.listening;
  }

  /** A new key for `rollout`: its calls record there until {@link finish}. */
  open(rollout: EndpointRollout): string {
    return this.recording.open(rollout);
  }

  /** Ends `key`: its calls answer 409 from now on. */
  finish(key: string): void {
    this.recording.finish(key);
  }

  /** Calls forwarded and not answered yet. */
  get inFlight(): number {
    return this.recording.inFlight;
  }

  /** Stops listening and closes every connection, the upstream's too (calls in flight are cut off). */
  async close(): Promise<void> {
    try {
      await this.server.close();
    } finally {
      this.recording.close();
    }
  }
}
