// A stand-in for an unreliable inference fleet: forwards to the model's
// server, but answers a seeded fraction of chat calls with 503 (a node
// preempted), as spot instances do. The proxy records each such call as an
// infrastructure failure of its session; the service's client retries it.
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";

/** A running flaky forwarder. */
export interface FlakyUpstream {
  /** Its OpenAI-style base URL (ends in `/v1`). */
  baseURL: string;
  /** How many calls it failed on purpose. */
  failed(): number;
  close(): Promise<void>;
}

/** Forwards to `target` (a base URL ending in `/v1`), failing `rate` of the chat calls. */
export async function startFlakyUpstream(
  target: string,
  rate: number,
  random: () => number,
): Promise<FlakyUpstream> {
  let failed = 0;
  const server = createServer(async (req, res) => {
    const body = await read(req);
    if (req.url?.endsWith("/chat/completions") && random() < rate) {
      failed++;
      res.writeHead(503, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: "the inference node was preempted" } }));
      return;
    }
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (req.headers.authorization) headers.authorization = req.headers.authorization;
    const path = (req.url ?? "/").replace(/^\/v1/, "");
    const r = await fetch(`${target}${path}`, {
      method: req.method,
      headers,
      ...(body.length > 0 ? { body: body.toString("utf8") } : {}),
    });
    res.writeHead(r.status, { "content-type": r.headers.get("content-type") ?? "text/plain" });
    res.end(Buffer.from(await r.arrayBuffer()));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    failed: () => failed,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function read(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
