// `report --serve`: the report of a run as it trains, from a small HTTP
// server on the loopback interface. The page asks the server every second or
// so whether the run changed (the data directory's state file, the JSONL file,
// or the service's checkpoint list) and draws the new steps in place.
import { createHash } from "node:crypto";
import { stat } from "node:fs/promises";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { InvalidArgumentError, kindOf } from "../util/argument-error.js";
import { renderReport } from "./render.js";
import type { ReportRun } from "./run.js";
import type { ReportSource } from "./sources.js";

/** Options of {@link serveReport}. */
export interface ServeReportOptions {
  /** Reads the run; called when its version changes (or on every check without `version`). */
  load: () => Promise<ReportRun>;
  /**
   * A cheap token that changes when the run does (a file's size and time).
   * Without it, the run is loaded on every check and its page compared.
   */
  version?: () => Promise<string>;
  /** `127.0.0.1` (default), `::1` or `localhost`: the report is never served beyond this machine. */
  host?: string;
  /** Default 0: a free port. */
  port?: number;
  /** How often the page asks for changes, in ms. Default 1000. */
  interval?: number;
}

/** A running report server. */
export interface ReportServer {
  /** The page's address, e.g. `http://127.0.0.1:41234/`. */
  url: string;
  close(): Promise<void>;
}

const LOOPBACK = new Set(["127.0.0.1", "::1", "localhost"]);

/** A version token of files: their size and modification time (a missing file counts as such). */
export function filesVersion(files: readonly string[]): () => Promise<string> {
  return async () => {
    const parts = await Promise.all(
      files.map(async (f) => {
        try {
          const s = await stat(f);
          return `${s.size}:${s.mtimeMs}`;
        } catch (error) {
          return (error as NodeJS.ErrnoException).code ?? "error";
        }
      }),
    );
    return parts.join(",");
  };
}

/** The files whose change means a source's run changed. */
export function sourceFiles(sources: readonly ReportSource[]): string[] {
  return sources.map((s) =>
    s.dataDir !== undefined
      ? path.join(s.dataDir, "emulator-state.json")
      : path.resolve(s.groupsFile ?? s.store ?? ""),
  );
}

/**
 * Serves the live report of a run on the loopback interface until closed.
 * The page fetches nothing but its own server; a source that cannot be read
 * yet (an emulator that has not written its state) shows as waiting.
 *
 * @example
 * const server = await serveReport({ load: () => loadDataDir(".emulator") });
 * console.log(server.url);
 */
export async function serveReport(options: ServeReportOptions): Promise<ReportServer> {
  if (!options || typeof options.load !== "function")
    throw new InvalidArgumentError(
      "serveReport(options)",
      "options.load",
      "a function that reads the run",
      options?.load,
    );
  const host = options.host ?? "127.0.0.1";
  if (!LOOPBACK.has(host))
    throw new InvalidArgumentError(
      "serveReport(options)",
      "options.host",
      "",
      undefined,
      `expected 127.0.0.1, ::1 or localhost (the report is served to this machine only), received ${JSON.stringify(host)}`,
    );
  const interval = options.interval ?? 1000;
  if (!Number.isFinite(interval) || interval < 50)
    throw new InvalidArgumentError(
      "serveReport(options)",
      "options.interval",
      "",
      undefined,
      `expected a number of milliseconds of at least 50, received ${typeof interval === "number" ? interval : kindOf(interval)}`,
    );
  let cached: { version: string; html: string } | undefined;
  let pending: Promise<{ version: string; html: string }> | undefined;

  const page = async (): Promise<{ version: string; html: string }> => {
    const version = options.version ? await options.version() : undefined;
    if (cached && version !== undefined && cached.version === version) return cached;
    let run: ReportRun;
    try {
      run = await options.load();
    } catch (error) {
      run = {
        title: "Waiting for the run",
        subtitle: `cannot read it yet: ${(error as Error).message}`,
        steps: [],
      };
    }
    // The page carries its own version; without a cheap token it is the page's hash.
    const draft = renderReport(run, { live: { interval } });
    const v = version ?? createHash("sha256").update(draft).digest("hex").slice(0, 16);
    const html = draft.replace(
      '"live":{"interval":',
      `"live":{"version":${JSON.stringify(v)},"interval":`,
    );
    cached = { version: v, html };
    return cached;
  };
  // Concurrent requests share one load.
  const current = () => {
    pending ??= page().finally(() => {
      pending = undefined;
    });
    return pending;
  };

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    void (async () => {
      const address = server.address() as AddressInfo;
      // Another site's page cannot reach it through a name that points here (DNS rebinding).
      const allowed = [
        `127.0.0.1:${address.port}`,
        `localhost:${address.port}`,
        `[::1]:${address.port}`,
      ];
      if (!allowed.includes(req.headers.host ?? "")) {
        res.writeHead(421, { "content-type": "text/plain" }).end("misdirected request\n");
        return;
      }
      if (req.method !== "GET" && req.method !== "HEAD") {
        res.writeHead(405, { allow: "GET, HEAD" }).end();
        return;
      }
      const url = new URL(req.url ?? "/", "http://localhost");
      const headers = {
        "cache-control": "no-store",
        "x-content-type-options": "nosniff",
        // The page may talk to this server only, and load nothing.
        "content-security-policy":
          "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; connect-src 'self'; base-uri 'none'; form-action 'none'",
      };
      if (url.pathname === "/") {
        const { html } = await current();
        res.writeHead(200, { ...headers, "content-type": "text/html; charset=utf-8" });
        res.end(req.method === "HEAD" ? undefined : html);
      } else if (url.pathname === "/version") {
        const { version } = await current();
        res.writeHead(200, { ...headers, "content-type": "application/json" });
        res.end(JSON.stringify({ version }));
      } else res.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
    })().catch((error) => {
      if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain" });
      res.end(`cannot draw the report: ${(error as Error).message}\n`);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const shown = host === "::1" ? "[::1]" : host;
  return {
    url: `http://${shown}:${port}/`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}
