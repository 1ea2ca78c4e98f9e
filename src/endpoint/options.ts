import { isIP } from "node:net";
import { InvalidArgumentError, isObjectLike } from "../util/argument-error.js";
import { isLoopbackHostname } from "../util/loopback.js";

/** Options of the recording endpoint behind `t.baseURL` (and of the standalone proxy). */
export interface EndpointOptions {
  /**
   * The address to listen on. Default `127.0.0.1`: only this machine can
   * connect. Another address needs `allowRemote: true`.
   */
  host?: string;
  /** TCP port; default 0 (a free one). */
  port?: number;
  /**
   * Lets `host` be an address other machines can reach (a container's
   * interface, `0.0.0.0`). Every call still needs its rollout's key.
   * Default `false`.
   */
  allowRemote?: boolean;
  /**
   * The root URL agents are given (`t.baseURL` is it plus `/v1`), when they
   * reach the endpoint by another address than the one it listens on: a
   * container's host name, a reverse proxy (`https://gw.example/recorder`).
   * An http(s) URL without query, fragment or credentials. Default: the
   * listening address, with `0.0.0.0` / `::` (which no client can connect
   * to elsewhere) given as `127.0.0.1` / `[::1]`.
   */
  publicURL?: string;
  /** Largest request body read, in bytes; a larger one answers 413. Default 32 MiB. */
  maxBodyBytes?: number;
  /**
   * How long the upstream may take to answer a call (to its headers), in ms,
   * as the `openai` client's `timeout`. Default 600,000 (10 minutes), the
   * SDK's own. Past it the agent gets 504.
   */
  timeoutMs?: number;
  /**
   * Tries a chat completion again, up to this many times with backoff, only
   * when it provably never reached the upstream: the connection was refused,
   * could not be made in time, or the host name did not resolve. A call
   * that may have reached it (a connection reset or closed after the
   * request was written) is not idempotent and is never sent again: the
   * agent gets 502 and its own client decides. Answers the upstream gave
   * (429, 500, ...) go back to the agent as they are. `GET /v1/models` is
   * tried again on any network error. Default 2.
   */
  maxRetries?: number;
  /**
   * The most connections open to the upstream at once. Calls reuse them
   * (keep-alive), and a call beyond the cap waits for one to come free
   * rather than opening another: a burst of rollouts never opens a socket
   * per call. The upstream's own limit on concurrent requests (vLLM's
   * `--max-num-seqs`, a provider's rate) is what to size it by. Default 256.
   */
  maxUpstreamConnections?: number;
  /** Where the endpoint says what it refused or could not forward. Default `console`. */
  logger?: { warn(message: string): void };
}

export const DEFAULT_MAX_BODY_BYTES = 32 * 1024 * 1024;
export const DEFAULT_TIMEOUT_MS = 600_000;
export const DEFAULT_MAX_RETRIES = 2;
export const DEFAULT_MAX_UPSTREAM_CONNECTIONS = 256;

/** The options with their defaults, checked. */
export interface ResolvedEndpointOptions {
  host: string;
  /** The root URL handed out, without a trailing `/`; absent: the listening address. */
  publicURL?: string;
  port: number;
  maxBodyBytes: number;
  timeoutMs: number;
  maxRetries: number;
  maxUpstreamConnections: number;
  logger: { warn(message: string): void };
}

export function resolveEndpointOptions(
  call: string,
  options: EndpointOptions | undefined,
): ResolvedEndpointOptions {
  if (options !== undefined && !isObjectLike(options))
    throw new InvalidArgumentError(call, "endpoint", "an object", options);
  const o = options ?? {};
  const host = o.host ?? "127.0.0.1";
  if (
    typeof host !== "string" ||
    (isIP(host.replace(/^\[|\]$/g, "")) === 0 && host !== "localhost")
  )
    throw new InvalidArgumentError(call, "endpoint.host", "an IP address or localhost", host);
  if (!isLoopbackHostname(host) && o.allowRemote !== true)
    throw new InvalidArgumentError(
      call,
      "endpoint.host",
      "a loopback address",
      host,
      `${host} can be reached from other machines; pass allowRemote: true to listen there (every call still needs its rollout's key)`,
    );
  const whole = (name: string, value: unknown, min: number, fallback: number): number => {
    if (value === undefined) return fallback;
    if (typeof value !== "number" || !Number.isInteger(value) || value < min)
      throw new InvalidArgumentError(
        call,
        `endpoint.${name}`,
        `a whole number of at least ${min}`,
        value,
      );
    return value;
  };
  const port = whole("port", o.port, 0, 0);
  if (port > 65535)
    throw new InvalidArgumentError(call, "endpoint.port", "a port (0 to 65535)", port);
  if (o.logger !== undefined && (!isObjectLike(o.logger) || typeof o.logger.warn !== "function"))
    throw new InvalidArgumentError(
      call,
      "endpoint.logger",
      "an object with warn(message)",
      o.logger,
    );
  return {
    host: host === "localhost" ? "127.0.0.1" : host,
    ...(o.publicURL === undefined ? {} : { publicURL: checkPublicURL(call, o.publicURL) }),
    port,
    maxBodyBytes: whole("maxBodyBytes", o.maxBodyBytes, 1, DEFAULT_MAX_BODY_BYTES),
    timeoutMs: whole("timeoutMs", o.timeoutMs, 1, DEFAULT_TIMEOUT_MS),
    maxRetries: whole("maxRetries", o.maxRetries, 0, DEFAULT_MAX_RETRIES),
    maxUpstreamConnections: whole(
      "maxUpstreamConnections",
      o.maxUpstreamConnections,
      1,
      DEFAULT_MAX_UPSTREAM_CONNECTIONS,
    ),
    logger: (o.logger as { warn(message: string): void } | undefined) ?? console,
  };
}

function checkPublicURL(call: string, value: unknown): string {
  const expected = "an http(s) URL without query, fragment or credentials, not ending in /v1";
  let url: URL | undefined;
  try {
    url = new URL(String(value));
  } catch {}
  if (
    typeof value !== "string" ||
    !url ||
    (url.protocol !== "http:" && url.protocol !== "https:") ||
    url.search !== "" ||
    url.hash !== "" ||
    url.username !== "" ||
    url.password !== "" ||
    /[?#]/.test(value)
  )
    throw new InvalidArgumentError(call, "endpoint.publicURL", expected, value);
  const root = `${url.origin}${url.pathname.replace(/\/+$/, "")}`;
  if (/\/v1$/.test(root))
    throw new InvalidArgumentError(
      call,
      "endpoint.publicURL",
      expected,
      value,
      `${value} ends in /v1: give the root URL (/v1 is added to it for t.baseURL)`,
    );
  return root;
}
