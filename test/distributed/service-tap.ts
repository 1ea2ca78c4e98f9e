// A loopback proxy in front of the emulator that records every training job
// the service accepted, as it was sent.
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface SentGroup {
  metadata: { group_id?: string };
  trajectories: {
    reward: number;
    metadata: { rollout_index?: number };
    initial_policy_version: number | null;
    final_policy_version: number | null;
  }[];
  exceptions: { type: string; message: string }[];
}

export interface ServiceTap {
  url: string;
  /** The groups of each training job the service answered 2xx for, in order. */
  jobs: SentGroup[][];
  /** Resolves when a request whose path matches `re` was answered. */
  answered(re: RegExp): Promise<void>;
  /** The next job creation is answered 400 without reaching the service (the service refused it). */
  refuseNextJob(): void;
  /** The next job creation reaches the service (the job runs) and its answer is lost (a 502). */
  loseNextJobAnswer(): void;
  close(): Promise<void>;
}

export async function startTap(upstream: string): Promise<ServiceTap> {
  const origin = new URL(upstream).origin;
  const jobs: SentGroup[][] = [];
  const waiters: { re: RegExp; resolve: () => void }[] = [];
  let refuse = 0;
  let lose = 0;
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    const url = req.url ?? "/";
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) {
      if (typeof v === "string" && !["host", "connection", "content-length"].includes(k))
        headers[k] = v;
    }
    const creating = req.method === "POST" && /\/training-jobs$/.test(url);
    if (creating && refuse > 0) {
      refuse -= 1;
      res.writeHead(400, { "content-type": "application/json" });
      res.end(JSON.stringify({ detail: "refused by the test's tap" }));
      return;
    }
    const answer = await fetch(origin + url, {
      method: req.method,
      headers,
      body: body.length > 0 ? body : undefined,
    });
    const text = await answer.text();
    if (req.method === "POST" && /\/training-jobs$/.test(url) && answer.ok) {
      jobs.push(JSON.parse(body.toString()).trajectory_groups);
    }
    if (creating && lose > 0) {
      lose -= 1;
      res.writeHead(502, { "content-type": "text/plain" });
      res.end("bad gateway (the test's tap lost the answer)");
      return;
    }
    res.writeHead(answer.status, { "content-type": answer.headers.get("content-type") ?? "" });
    res.end(text);
    for (const w of waiters) if (w.re.test(url)) w.resolve();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    jobs,
    answered: (re) => new Promise((resolve) => waiters.push({ re, resolve })),
    refuseNextJob: () => {
      refuse += 1;
    },
    loseNextJobAnswer: () => {
      lose += 1;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
