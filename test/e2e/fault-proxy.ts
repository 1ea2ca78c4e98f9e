// A loopback proxy between the library and the emulator that injects faults
// and records which groups the emulator confirmed.
import http from "node:http";
import type { AddressInfo } from "node:net";

export type Fault =
  | { kind: "status"; status: number; headers?: Record<string, string>; body?: unknown }
  | { kind: "drop" }
  | { kind: "slow"; delayMs: number }
  | { kind: "hold" }
  /** Passed on to the upstream, whose answer is then replaced by a 500: an answer lost after the work was done. */
  | { kind: "lost" };

export interface FaultProxy {
  /** Base URL ending in `/v1`. */
  url: string;
  /** Group keys (`metadata.key`) of every group the upstream answered 2xx for, in order. */
  confirmed: string[];
  /** Every group the upstream answered 2xx for on `/log`, as sent. */
  loggedGroups: { metadata?: { key?: string }; trajectories: { reward: number }[] }[];
  /** Requests seen, per path. */
  seen: { method: string; path: string }[];
  close(): Promise<void>;
}

export async function startFaultProxy(
  upstream: string,
  /** `keys`: the group keys a `/log` request carries, in order (empty for other requests). */
  plan: (req: { method: string; path: string; n: number; keys: string[] }) => Fault | undefined,
): Promise<FaultProxy> {
  const origin = new URL(upstream).origin;
  const confirmed: string[] = [];
  const loggedGroups: FaultProxy["loggedGroups"] = [];
  const seen: { method: string; path: string }[] = [];
  const held: http.ServerResponse[] = [];
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    const path = req.url ?? "/";
    seen.push({ method: req.method ?? "GET", path });
    const fault = plan({
      method: req.method ?? "GET",
      path,
      n: seen.length,
      keys: keysOf(path, body),
    });
    if (fault?.kind === "drop") return req.socket.destroy();
    if (fault?.kind === "hold") return void held.push(res);
    if (fault?.kind === "status") {
      res.writeHead(fault.status, { "content-type": "application/json", ...fault.headers });
      return res.end(JSON.stringify(fault.body ?? { detail: "injected fault" }));
    }
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) {
      if (typeof v === "string" && !["host", "connection", "content-length"].includes(k))
        headers[k] = v;
    }
    const answer = await fetch(origin + path, {
      method: req.method,
      headers,
      body: body.length > 0 ? body : undefined,
    });
    const text = Buffer.from(await answer.arrayBuffer());
    if (answer.ok && path.endsWith("/log")) {
      for (const g of JSON.parse(body.toString()).trajectory_groups) {
        confirmed.push(g.metadata?.key);
        loggedGroups.push(g);
      }
    }
    if (fault?.kind === "slow") await new Promise((r) => setTimeout(r, fault.delayMs));
    if (fault?.kind === "lost") {
      res.writeHead(500, { "content-type": "application/json" });
      return res.end(JSON.stringify({ detail: "injected fault after the upstream answered" }));
    }
    res.writeHead(answer.status, {
      "content-type": answer.headers.get("content-type") ?? "application/json",
    });
    res.end(text);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    confirmed,
    loggedGroups,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        for (const r of held) r.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function keysOf(path: string, body: Buffer): string[] {
  if (!path.endsWith("/log")) return [];
  try {
    const groups = JSON.parse(body.toString()).trajectory_groups;
    if (!Array.isArray(groups)) return [];
    return groups.map((g) => g?.metadata?.key).filter((k) => typeof k === "string");
  } catch {
    return [];
  }
}

/** A small valid group with distinct rewards, tagged `metadata.key`. */
export function sampleGroup(key: string, size = 2) {
  return {
    trajectories: Array.from({ length: size }, (_, i) => ({
      messages_and_choices: [
        { role: "user" as const, content: "please say red" },
        { role: "assistant" as const, content: i % 2 === 0 ? "red" : "blue" },
      ],
      reward: i % 2 === 0 ? 1 : 0,
    })),
    metadata: { key },
  };
}
