import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, expect, it } from "vitest";
import {
  type Emulator,
  type EmulatorOptions,
  isLoopbackHost,
  parseApiKeys,
  startEmulator,
} from "../../src/emulator/index.js";
import { call, createModel, start, waitForJob } from "./helpers.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});
async function tempDir() {
  const d = await mkdtemp(path.join(tmpdir(), "emu-sft-"));
  cleanups.push(() => rm(d, { recursive: true, force: true }));
  return d;
}
async function emulator(options: EmulatorOptions) {
  const emu = await start(options);
  cleanups.push(() => emu.close());
  return emu;
}
async function serve(handler: Parameters<typeof createServer>[1]): Promise<string> {
  const server: Server = createServer(handler);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  cleanups.push(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const LINE = `${JSON.stringify({
  messages: [
    { role: "user", content: "say red" },
    { role: "assistant", content: "red" },
  ],
})}\n`;

/** The event types and the failure message of one SFT job on `url`. */
async function sft(emu: Emulator, url: string) {
  const m = await createModel(emu, `sft-${Math.random().toString(36).slice(2)}`);
  const job = await call(emu, "POST", "/preview/sft-training-jobs", {
    model_id: m.id,
    training_data_url: url,
  });
  expect(job.status).toBe(200);
  const events = await waitForJob(emu, job.json.id);
  return {
    types: events.map((e) => e.type),
    message: events.at(-1).data.error_message as string | undefined,
  };
}

it("refuses every file:// URL when no sftDataDir is given, with one message whatever the path", async () => {
  const emu = await emulator({});
  const dir = await tempDir();
  await writeFile(path.join(dir, "data.jsonl"), LINE);
  const results = await Promise.all(
    ["/etc/passwd", "/etc", "/no/such/file", path.join(dir, "data.jsonl")].map((p) =>
      sft(emu, pathToFileURL(p).href),
    ),
  );
  for (const r of results) {
    expect(r.types).toEqual(["training_started", "training_failed"]);
    expect(r.message).toBe(results[0]?.message);
  }
  expect(results[0]?.message).toMatch(/reads no local files.*sftDataDir/);
});

it("reads file:// only inside sftDataDir, and answers alike for a missing path, a directory, a file outside, a link out and a file that is not JSONL", async () => {
  const dir = await tempDir();
  const outside = await tempDir();
  await writeFile(path.join(dir, "good.jsonl"), LINE);
  await writeFile(path.join(dir, "notes.txt"), "not json at all\n");
  await mkdir(path.join(dir, "sub"));
  await writeFile(path.join(outside, "secret.jsonl"), LINE);
  await symlink(path.join(outside, "secret.jsonl"), path.join(dir, "link.jsonl"));
  const emu = await emulator({ sftDataDir: dir });

  expect((await sft(emu, pathToFileURL(path.join(dir, "good.jsonl")).href)).types.at(-1)).toBe(
    "training_ended",
  );
  const bad = await Promise.all(
    [
      path.join(dir, "missing.jsonl"),
      path.join(dir, "sub"),
      path.join(dir, "notes.txt"),
      path.join(dir, "link.jsonl"),
      path.join(outside, "secret.jsonl"),
      path.join(dir, "..", path.basename(outside), "secret.jsonl"),
      "/etc/passwd",
    ].map((p) => sft(emu, pathToFileURL(p).href)),
  );
  for (const r of bad) {
    expect(r.types).toEqual(["training_started", "training_failed"]);
    expect(r.message).toBe(bad[0]?.message);
  }
  expect(bad[0]?.message).toMatch(/^Could not read training_data_url: it must name a JSONL file/);
  expect(bad[0]?.message).not.toMatch(/ENOENT|EISDIR|passwd|secret|missing/);
});

it("fetches http(s) training data only when fetchTrainingData is on", async () => {
  const base = await serve((_req, res) => res.end(LINE));
  const off = await emulator({});
  const refused = await sft(off, `${base}/data.jsonl`);
  expect(refused.types).toEqual(["training_started", "training_failed"]);
  expect(refused.message).toMatch(/fetches no URLs.*fetchTrainingData/);
  const on = await emulator({ fetchTrainingData: true });
  expect((await sft(on, `${base}/data.jsonl`)).types.at(-1)).toBe("training_ended");
});

it("fails a fetch that redirects, answers too much, never answers or is not JSONL, with one message for all", async () => {
  let hung = 0;
  const base = await serve((req, res) => {
    if (req.url === "/redirect") {
      res.writeHead(302, { location: "/data.jsonl" }).end();
    } else if (req.url === "/huge") {
      // Streams without end: the emulator must stop reading at its cap.
      const chunk = Buffer.alloc(64 * 1024, "a");
      const pump = () => {
        while (res.write(chunk)) {}
        res.once("drain", pump);
      };
      pump();
    } else if (req.url === "/hang") {
      hung++;
    } else if (req.url === "/data.jsonl") {
      res.end(LINE);
    } else if (req.url === "/html") {
      res.end("<html>hi</html>");
    } else {
      res.writeHead(404).end();
    }
  });
  const emu = await emulator({ fetchTrainingData: { maxBytes: 256 * 1024, timeoutMs: 300 } });
  const results = await Promise.all(
    ["/redirect", "/huge", "/hang", "/html", "/missing"].map((p) => sft(emu, `${base}${p}`)),
  );
  for (const r of results) {
    expect(r.types).toEqual(["training_started", "training_failed"]);
    expect(r.message).toBe(results[0]?.message);
  }
  expect(results[0]?.message).toMatch(/^Could not read training_data_url: fetching it failed/);
  expect(hung).toBe(1);
});

it("warns through onWarning when it listens beyond loopback with no API keys", async () => {
  const warnings: string[] = [];
  const open = await startEmulator({
    port: 0,
    host: "0.0.0.0",
    onWarning: (m) => warnings.push(m),
  });
  await open.close();
  expect(warnings).toHaveLength(1);
  expect(warnings[0]).toMatch(/listens on 0\.0\.0\.0.*accepts any API key/);
  const keyed = await startEmulator({
    port: 0,
    host: "0.0.0.0",
    apiKeys: ["k"],
    onWarning: (m) => warnings.push(m),
  });
  await keyed.close();
  const local = await startEmulator({ port: 0, onWarning: (m) => warnings.push(m) });
  await local.close();
  expect(warnings).toHaveLength(1);
  expect(
    ["127.0.0.1", "127.8.0.1", "localhost", "::1", "[::1]", "::ffff:127.0.0.1"].map(isLoopbackHost),
  ).toEqual([true, true, true, true, true, true]);
  expect(
    ["0.0.0.0", "::", "10.0.0.2", "example.com", "::ffff:10.0.0.1"].map(isLoopbackHost),
  ).toEqual([false, false, false, false, false]);
});

it("reads accepted keys from apiKeysFile, and says which entry is wrong without showing it", async () => {
  const dir = await tempDir();
  const file = path.join(dir, "keys");
  await writeFile(file, "# keys\nfile-key-alice alice\n\nfile-key-local\n");
  const emu = await startEmulator({ port: 0, apiKeysFile: file });
  cleanups.push(() => emu.close());
  const as = (key: string) =>
    fetch(`${emu.url}/preview/models`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ project: "p", name: key, base_model: "b" }),
    }).then(async (r) => ({ status: r.status, json: (await r.json()) as any }));
  expect((await as("file-key-alice")).json.entity).toBe("alice");
  expect((await as("file-key-local")).json.entity).toBe("local");
  expect((await as("other")).status).toBe(401);

  expect(parseApiKeys("a, b bob\n# c\n")).toEqual({ a: "local", b: "bob" });
  await writeFile(file, "good-key\nsecret-value-123 alice extra\n");
  const failure = await startEmulator({ port: 0, apiKeysFile: file }).catch((e: Error) => e);
  expect(failure).toBeInstanceOf(Error);
  expect((failure as Error).message).toMatch(/Entry 2 of apiKeysFile .* has more than a key/);
  expect((failure as Error).message).not.toMatch(/secret-value|good-key/);
  const missing = await startEmulator({ port: 0, apiKeysFile: path.join(dir, "none") }).catch(
    (e: Error) => e,
  );
  expect((missing as Error).message).toMatch(/apiKeysFile .*none could not be read/);
});
