import { mkdtemp, readdir, readFile, writeFile } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { TrainableModel, TrainingClient, TrajectoryShipper } from "trajectory-recorder";
import { afterEach, expect, it } from "vitest";

// A log endpoint whose answers the test controls: each request waits for `gate`.
let server: http.Server | undefined;
afterEach(async () => {
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  server = undefined;
});

async function fakeService(
  onLog: (body: { trajectory_groups: { metadata: { key: string } }[] }) => Promise<number> | number,
) {
  server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString()) : {};
    if (req.url?.endsWith("/preview/models")) {
      res.writeHead(200, { "content-type": "application/json" });
      return res.end(
        JSON.stringify({
          id: "5b1f5d8e-3f5e-4a57-8d0a-6f0f3f1e2a11",
          entity: "e",
          project: "p",
          name: "n",
          base_model: "b",
        }),
      );
    }
    const status = await onLog(body);
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify(status === 200 ? {} : { detail: `status ${status}` }));
  });
  await new Promise<void>((r) => server!.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  const client = new TrainingClient({
    apiKey: "k",
    baseURL: `http://127.0.0.1:${port}/v1`,
    maxRetries: 0,
  });
  return TrainableModel.register(client, { project: "p", name: "n", baseModel: "b" });
}

const group = (key: string, pad = 0) => ({
  trajectories: [{ reward: 1, logs: ["x".repeat(pad)] }],
  metadata: { key },
});
const silent = () => {
  const lines: string[] = [];
  return { lines, warn: (m: string) => lines.push(m), error: (m: string) => lines.push(m) };
};

it("makes add wait while maxQueuedBytes are held, and goes on as groups ship", async () => {
  const release: (() => void)[] = [];
  const model = await fakeService(() => new Promise<number>((r) => release.push(() => r(200))));
  const shipper = new TrajectoryShipper({
    model,
    concurrency: 1,
    maxQueuedBytes: 2500,
    flushOnExit: false,
    logger: silent(),
  });
  await shipper.add(group("a", 1000));
  await shipper.add(group("b", 1000));
  let thirdAdded = false;
  const third = shipper.add(group("c", 1000)).then(() => {
    thirdAdded = true;
  });
  await new Promise((r) => setTimeout(r, 50));
  expect(thirdAdded).toBe(false);
  expect(shipper.stats().queued).toBe(2);
  // The first request reaches the server when it does: wait for it, not for a time.
  while (release.length === 0) await new Promise((r) => setTimeout(r, 2));
  release.shift()!();
  await third;
  expect(thirdAdded).toBe(true);
  const flushing = shipper.flush();
  const drain = setInterval(() => release.shift()?.(), 5);
  await flushing;
  clearInterval(drain);
  expect(shipper.stats()).toMatchObject({ queued: 0, shipped: 3 });
  await shipper.close();
});

it("has each group on disk before add resolves, and removes it once the service confirmed it", async () => {
  let answer: (() => void) | undefined;
  const model = await fakeService(() => new Promise<number>((r) => (answer = () => r(200))));
  const spoolDir = await mkdtemp(path.join(tmpdir(), "spool-"));
  const shipper = new TrajectoryShipper({ model, spoolDir, flushOnExit: false, logger: silent() });
  await shipper.add(group("disk"));
  const files = (await readdir(spoolDir)).filter((f) => f.endsWith(".group.json"));
  expect(files).toHaveLength(1);
  expect(JSON.parse(await readFile(path.join(spoolDir, files[0]!), "utf8")).group.metadata).toEqual(
    { key: "disk" },
  );
  expect(shipper.stats().spooled).toBe(1);
  while (!answer) await new Promise((r) => setTimeout(r, 2));
  answer();
  await shipper.close();
  expect(await readdir(spoolDir)).toEqual([]);
  expect(shipper.stats()).toMatchObject({ spooled: 0, shipped: 1 });
});

it("replays groups spooled by an earlier run when it starts, in order", async () => {
  const keys: string[] = [];
  const model = await fakeService((b) => {
    keys.push(b.trajectory_groups[0]!.metadata.key);
    return 200;
  });
  const spoolDir = await mkdtemp(path.join(tmpdir(), "spool-"));
  for (const [i, key] of ["old1", "old2"].entries()) {
    const entry = { id: `0000${i}`, split: "train", group: group(key), logged: false };
    await writeFile(path.join(spoolDir, `0000${i}.group.json`), JSON.stringify(entry));
  }
  await writeFile(path.join(spoolDir, "torn.group.json"), "{not json");
  const logger = silent();
  const shipper = new TrajectoryShipper({
    model,
    spoolDir,
    concurrency: 1,
    flushOnExit: false,
    logger,
  });
  await shipper.add(group("new"));
  const stats = await shipper.close();
  expect(keys).toEqual(["old1", "old2", "new"]);
  expect(await readdir(spoolDir)).toEqual(["torn.group.json"]);
  expect(stats).toMatchObject({ shipped: 3, unreadable: 1, failed: 0 });
  expect(logger.lines.join("\n")).toMatch(
    /could not read spool file .*torn\.group\.json.*left in place/,
  );
});

it("gives up after maxAttempts on a server that keeps failing, keeping the group and saying so", async () => {
  let calls = 0;
  const model = await fakeService(() => {
    calls += 1;
    return 503;
  });
  const logger = silent();
  const shipper = new TrajectoryShipper({
    model,
    maxAttempts: 3,
    backoff: { initialDelayMs: 1, maxDelayMs: 2 },
    flushOnExit: false,
    logger,
  });
  await shipper.add(group("stuck"));
  const stats = await shipper.close();
  expect(calls).toBe(3);
  expect(stats).toMatchObject({ shipped: 0, failed: 1, retried: 2, queued: 0 });
  expect(shipper.failedGroups()).toEqual([expect.objectContaining({ metadata: { key: "stuck" } })]);
  expect(logger.lines).toHaveLength(1);
  expect(logger.lines[0]).toMatch(/could not log a group to model .* status 503.*kept/);
});

it("reports what is left when close times out, and refuses new groups", async () => {
  const model = await fakeService(() => new Promise<number>(() => {}));
  const spoolDir = await mkdtemp(path.join(tmpdir(), "spool-"));
  const logger = silent();
  const shipper = new TrajectoryShipper({ model, spoolDir, flushOnExit: false, logger });
  await shipper.add(group("slow"));
  const stats = await shipper.close({ timeoutMs: 50 });
  expect(stats).toMatchObject({ shipped: 0, failed: 1, queued: 0, spooled: 1 });
  expect(logger.lines.join("\n")).toMatch(
    /closed after 50 ms with 1 group\(s\) not shipped; they stay in .* replayed on the next start/,
  );
  expect(await readdir(spoolDir)).toHaveLength(1);
  await expect(shipper.add(group("late"))).rejects.toThrow(/the shipper is closed/);
  server?.closeAllConnections();
});

it("counts groups in flight or queued when close runs out of time as failed, and hands them back", async () => {
  const model = await fakeService(() => new Promise<number>(() => {}));
  const logger = silent();
  const shipper = new TrajectoryShipper({ model, concurrency: 1, flushOnExit: false, logger });
  await shipper.add(group("in-flight"));
  await shipper.add(group("queued"));
  const stats = await shipper.close({ timeoutMs: 50 });
  expect(stats).toMatchObject({ shipped: 0, failed: 2, queued: 0 });
  expect(shipper.failedGroups()).toEqual([
    expect.objectContaining({ metadata: { key: "in-flight" } }),
    expect.objectContaining({ metadata: { key: "queued" } }),
  ]);
  expect(logger.lines.join("\n")).toMatch(
    /closed after 50 ms with 2 group\(s\) not shipped; they are lost unless you take them from failedGroups\(\)/,
  );
  // The aborted request settles later; it must not count the group twice.
  await new Promise((r) => setTimeout(r, 20));
  expect(shipper.stats()).toMatchObject({ failed: 2, queued: 0 });
  server?.closeAllConnections();
});

it("installs exit handlers only while a shipper is open, and not at all when opted out", async () => {
  const model = await fakeService(() => 200);
  const before = {
    exit: process.listenerCount("beforeExit"),
    term: process.listenerCount("SIGTERM"),
  };
  const optedOut = new TrajectoryShipper({ model, flushOnExit: false });
  expect(process.listenerCount("SIGTERM")).toBe(before.term);
  const shipper = new TrajectoryShipper({ model, logger: silent() });
  expect(process.listenerCount("beforeExit")).toBe(before.exit + 1);
  expect(process.listenerCount("SIGTERM")).toBe(before.term + 1);
  await shipper.close();
  await optedOut.close();
  expect(process.listenerCount("beforeExit")).toBe(before.exit);
  expect(process.listenerCount("SIGTERM")).toBe(before.term);
});

it("rejects a bad group naming the field, before queueing it", async () => {
  const model = await fakeService(() => 200);
  const shipper = new TrajectoryShipper({ model, flushOnExit: false });
  await expect(shipper.add({ trajectories: [{ reward: "1" }] } as never)).rejects.toThrow(
    /groups\[0\]\.trajectories\[0\]\.reward/,
  );
  expect(shipper.stats().queued).toBe(0);
  await shipper.close();
});

it("with a spool, keeps a backlog beyond maxQueuedBytes on disk instead of waiting, and ships a group larger than the limit alone", async () => {
  const release: (() => void)[] = [];
  const seen: string[] = [];
  const model = await fakeService((b) => {
    seen.push(b.trajectory_groups[0]!.metadata.key);
    return new Promise<number>((r) => release.push(() => r(200)));
  });
  const spoolDir = await mkdtemp(path.join(tmpdir(), "spool-"));
  const shipper = new TrajectoryShipper({
    model,
    spoolDir,
    concurrency: 1,
    maxQueuedBytes: 2500,
    flushOnExit: false,
    logger: silent(),
  });
  // Five groups of about 1 KB: all accepted while nothing is confirmed.
  for (const key of ["a", "b", "c", "d", "e"]) await shipper.add(group(key, 1000));
  expect(shipper.stats()).toMatchObject({ queued: 5, spooled: 5, shipped: 0 });
  expect((await readdir(spoolDir)).filter((f) => f.endsWith(".group.json"))).toHaveLength(5);
  // One of 6 KB waits until nothing else is in memory, then goes alone.
  const drain = setInterval(() => release.shift()?.(), 5);
  await shipper.add(group("big", 6000));
  await shipper.flush();
  clearInterval(drain);
  expect(seen).toEqual(["a", "b", "c", "d", "e", "big"]);
  expect(await shipper.close()).toMatchObject({ queued: 0, shipped: 6, failed: 0, spooled: 0 });
});
