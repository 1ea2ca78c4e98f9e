// The one HTTP server the package runs for agents and orchestrators: a route
// table over node:http. The recording routes (`/v1/chat/completions`,
// `/v1/models`), the proxy's control API, sessions and feedback are each a
// list of routes added to it; the plumbing (errors, bodies, keys) is
// src/util/http.ts, shared with the emulator.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { errorMessage } from "../util/error-message.js";
import { pathOf, sendError } from "../util/http.js";

/** What a route's handler is given. */
export interface RouteContext {
  req: IncomingMessage;
  res: ServerResponse;
  /** The request's path, without its query. */
  path: string;
  /** The values of the pattern's `:name` segments. */
  params: Record<string, string>;
  /** The query string's parameters. */
  query: URLSearchParams;
}

/** One entry of the route table. */
export interface Route {
  /** The HTTP method (`GET`, `POST`, ...). */
  method: string;
  /** The path, with `:name` for a segment taken as a parameter (`/v1/trajectories/:id`). */
  path: string;
  handle(ctx: RouteContext): void | Promise<void>;
}

/** Answers a request no route matched. */
export type Fallback = (ctx: RouteContext) => void | Promise<void>;

interface Compiled {
  route: Route;
  parts: string[];
}

/** Where and how the server listens. */
export interface ListenOptions {
  host: string;
  port: number;
  logger: { warn(message: string): void };
  /** Takes secrets out of a message before it is logged. */
  redact?: (text: string) => string;
}

/**
 * An HTTP server with a route table: a path that matches with another method
 * answers 405 (with `allow`), one that matches nothing goes to the fallback.
 */
export class EndpointServer {
  readonly #routes: Compiled[] = [];
  readonly #options: ListenOptions;
  #fallback: Fallback;
  #server: Server | undefined;
  #starting: Promise<void> | undefined;
  #url: string | undefined;
  readonly #sockets = new Set<Socket>();

  constructor(options: ListenOptions) {
    this.#options = options;
    this.#fallback = ({ res, req, path }) =>
      sendError(
        res,
        404,
        `No route ${req.method} ${path}.`,
        "invalid_request_error",
        "unknown_url",
      );
  }

  /** Adds routes; earlier routes win where two match. */
  add(routes: readonly Route[]): this {
    for (const route of routes)
      this.#routes.push({ route, parts: route.path.split("/").filter(Boolean) });
    return this;
  }

  /** What answers a request no route matched. */
  setFallback(fallback: Fallback): this {
    this.#fallback = fallback;
    return this;
  }

  /** Listens (once); later calls wait for the same start. */
  start(): Promise<void> {
    this.#starting ??= new Promise<void>((resolve, reject) => {
      const server = createServer((req, res) => {
        this.#dispatch(req, res).catch((error) => {
          const message = errorMessage(error);
          this.#options.logger.warn(
            `trajectory-recorder endpoint: the recording endpoint failed on a request: ${this.#options.redact ? this.#options.redact(message) : message}`,
          );
          sendError(res, 500, "The recording endpoint failed on this request.", "server_error");
        });
      });
      server.keepAliveTimeout = 65_000;
      server.on("connection", (socket: Socket) => {
        this.#sockets.add(socket);
        socket.once("close", () => this.#sockets.delete(socket));
      });
      server.once("error", reject);
      server.listen(this.#options.port, this.#options.host, () => {
        server.off("error", reject);
        const { port } = server.address() as AddressInfo;
        const host = this.#options.host.includes(":")
          ? `[${this.#options.host}]`
          : this.#options.host;
        this.#url = `http://${host}:${port}`;
        this.#server = server;
        resolve();
      });
    });
    return this.#starting;
  }

  /** The server's root URL (`http://host:port`). Throws before {@link start} has finished. */
  get url(): string {
    if (!this.#url)
      throw new Error("The recording endpoint is not listening yet: await start() first.");
    return this.#url;
  }

  /** Whether the server is listening. */
  get listening(): boolean {
    return this.#url !== undefined && this.#server !== undefined;
  }

  /** Stops listening and closes every connection (requests in flight are cut off). */
  async close(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    this.#url = undefined;
    if (!server) {
      await this.#starting?.catch(() => {});
      if (!this.#server) return;
      return this.close();
    }
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const socket of this.#sockets) socket.destroy();
    await closed;
  }

  async #dispatch(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = pathOf(req);
    const url = req.url ?? "/";
    const q = url.indexOf("?");
    const query = new URLSearchParams(q === -1 ? "" : url.slice(q + 1));
    const parts = exactSegments(path);
    if (!parts) {
      sendError(
        res,
        404,
        `No route ${req.method} ${path.slice(0, 200)}: paths are matched exactly, so dot segments (. and .., also percent-encoded), empty segments and encoded slashes are refused.`,
        "invalid_request_error",
        "unknown_url",
      );
      return;
    }
    const allowed: string[] = [];
    for (const { route, parts: pattern } of this.#routes) {
      const params = match(pattern, parts);
      if (!params) continue;
      if (route.method !== req.method) {
        allowed.push(route.method);
        continue;
      }
      await route.handle({ req, res, path, params, query });
      return;
    }
    if (allowed.length) {
      res.setHeader("allow", [...new Set(allowed)].join(", "));
      sendError(
        res,
        405,
        `Use ${[...new Set(allowed)].join(" or ")} for ${path}, not ${req.method}.`,
        "invalid_request_error",
        "method_not_allowed",
      );
      return;
    }
    await this.#fallback({ req, res, path, params: {}, query });
  }
}

/**
 * The path's segments, or `undefined` when it is not in normal form: a
 * request that does not start with `/` (an absolute URL), an empty segment
 * (`//`, a trailing `/`), a dot segment (raw or percent-encoded, also
 * between encoded slashes or backslashes), a NUL, or bad percent-encoding. Such a path could
 * mean another route to a server behind us that normalises it, so it matches
 * nothing here.
 */
export function exactSegments(path: string): string[] | undefined {
  if (!path.startsWith("/")) return undefined;
  if (path === "/") return [];
  const parts = path.slice(1).split("/");
  for (const part of parts) {
    let decoded: string;
    try {
      decoded = decodeURIComponent(part);
    } catch {
      return undefined;
    }
    // An encoded slash may be part of a name (`Qwen%2FQwen3-4B`); what it
    // separates is held to the same rules, for a server that decodes it.
    for (const piece of decoded.split(/[/\\]/))
      if (piece === "" || piece === "." || piece === "..") return undefined;
    if (decoded.includes("\0")) return undefined;
  }
  return parts;
}

function match(pattern: string[], parts: string[]): Record<string, string> | undefined {
  if (pattern.length !== parts.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i] as string;
    const s = parts[i] as string;
    if (p.startsWith(":")) {
      try {
        params[p.slice(1)] = decodeURIComponent(s);
      } catch {
        return undefined;
      }
    } else if (p !== s) return undefined;
  }
  return params;
}
