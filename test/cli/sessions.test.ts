// `sessions list|show` and `feedback` against what a deployed service
// records: a real recording proxy on loopback with a store in a temporary
// directory (through --proxy while it runs), then the same directory read
// directly once it has stopped (--store).
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { type Emulator, startEmulator } from "trajectory-recorder/emulator";
import { type RecordingProxy, startRecordingProxy } from "trajectory-recorder/proxy";
import { TrajectoryStore } from "trajectory-recorder/store";
import { afterAll, beforeAll, expect, it } from "vitest";
import { cli, inProcess } from "./run.js";

const CONTROL = "control-key-0123456";
let emulator: Emulator;
let proxy: RecordingProxy | undefined;
let store: TrajectoryStore | undefined;
let dir: string;
const ids: Record<string, string> = {};

async function say(session: string, content: string): Promise<string> {
  const r = await fetch(`${(proxy as RecordingProxy).baseURL}/chat/completions`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${CONTROL}`,
      "content-type": "application/json",
      "x-trajectory-session": session,
    },
    body: JSON.stringify({ model: "toy", messages: [{ role: "user", content }], max_tokens: 4 }),
  });
  expect(r.status).toBe(200);
  return r.headers.get("x-trajectory-id") as string;
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "sessions-cli-"));
  emulator = await startEmulator({ port: 0, apiKeys: ["emu-key-123456"] });
  store = await TrajectoryStore.open({ dir });
  proxy = await startRecordingProxy({
    upstream: { baseURL: emulator.url, apiKey: "emu-key-123456" },
    apiKey: CONTROL,
    store,
    port: 0,
  });
  ids.alice = await say("alice", "hello");
  await say("alice", "again");
  ids.bob = await say("bob", "hi");
  process.env.PROXY_CONTROL_KEY = CONTROL;
}, 60_000);

afterAll(async () => {
  delete process.env.PROXY_CONTROL_KEY;
  await proxy?.close();
  await store?.close();
  await emulator?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A port nothing listens on. */
function freePort(): Promise<number> {
  const server = createServer();
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    }),
  );
}

/** Stops the proxy and its store, so the directory may be opened by the CLI. */
async function stopProxy(): Promise<void> {
  await proxy?.close();
  await store?.close();
  proxy = undefined;
  store = undefined;
}

it("lists and shows a running proxy's trajectories, by trajectory id or session id", async () => {
  const url = (proxy as RecordingProxy).url;
  const list = await inProcess(["sessions", "list", "--proxy", url, "--json"]);
  expect(list.stderr).toBe("");
  expect(list.code).toBe(0);
  const rows = JSON.parse(list.stdout).data as { id: string; session: string; calls: number }[];
  expect(rows.map((r) => [r.session, r.id, r.calls]).sort()).toEqual([
    ["alice", ids.alice, 2],
    ["bob", ids.bob, 1],
  ]);

  const table = await inProcess(["sessions", "list", "--proxy", url, "--limit", "1"]);
  expect(table.code).toBe(0);
  const lines = table.stdout.trim().split("\n");
  expect(lines[0]).toMatch(/^TRAJECTORY\s+SESSION\s+STATUS\s+CALLS\s+REWARD\s+ELIGIBLE\s+FEEDBACK/);
  expect(lines).toHaveLength(2);

  const bySession = await inProcess(["sessions", "show", "alice", "--proxy", url, "--json"]);
  expect(bySession.code).toBe(0);
  const record = JSON.parse(bySession.stdout);
  expect(record).toMatchObject({ id: ids.alice, session: "alice", reward: null, feedback: [] });
  const byId = await inProcess(["sessions", "show", ids.alice as string, "--proxy", url]);
  expect(byId.stdout).toContain(`Trajectory ${ids.alice}`);
  expect(byId.stdout).toContain("  session:     alice");
  expect(byId.stdout).toMatch(/Feedback \(0\):\nMessages:\n {2}user: hello\n {2}assistant: /);

  const missing = await inProcess(["sessions", "show", "nobody", "--proxy", url]);
  expect(missing.code).toBe(4);
  expect(missing.stderr).toContain('no trajectory and no session "nobody" in http://127.0.0.1:');
}, 30_000);

it("gives feedback through the proxy: stored, resent idempotently, a conflicting resend and an unknown id refused in sentences", async () => {
  const url = (proxy as RecordingProxy).url;
  const args = [
    "feedback",
    ids.alice as string,
    "--reward",
    "1",
    "--comment",
    "solved it",
    "--metric",
    "latency_s=2.5",
    "--metric",
    "polite=true",
    "--idempotency-key",
    "ticket-7",
    "--proxy",
    url,
  ];
  const first = await inProcess(args);
  expect(first.stderr).toBe("");
  expect(first.code).toBe(0);
  expect(first.stdout).toBe(
    `Feedback 1 for ${ids.alice} stored: reward 1, 2 metrics, a comment.\n`,
  );
  const again = await inProcess(args);
  expect(again.code).toBe(0);
  expect(again.stdout).toContain("already stored with this idempotency key (feedback 1)");

  const conflicting = args.map((a) => (a === "1" ? "0" : a));
  const conflict = await inProcess(conflicting);
  expect(conflict.code).toBe(1);
  expect(conflict.stderr).toMatch(
    /the proxy refused the feedback: Feedback with idempotency_key "ticket-7" was already stored with a different reward/,
  );

  const unknown = await inProcess(["feedback", "trj_nope", "--reward", "1", "--proxy", url]);
  expect(unknown.code).toBe(4);
  expect(unknown.stderr).toMatch(/^trajectory-recorder feedback: .*trj_nope/);

  const off = await inProcess(["feedback", ids.bob as string, "--not-eligible", "--proxy", url]);
  expect(off.code).toBe(0);
  const bob = JSON.parse(
    (await inProcess(["sessions", "show", "bob", "--proxy", url, "--json"])).stdout,
  );
  expect(bob).toMatchObject({ reward: null, eligible: false });
  const alice = JSON.parse(
    (await inProcess(["sessions", "show", ids.alice as string, "--proxy", url, "--json"])).stdout,
  );
  expect(alice).toMatchObject({ reward: 1, eligible: true });
  expect(alice.trajectory.metrics).toMatchObject({ latency_s: 2.5, polite: true });
  expect(alice.feedback).toHaveLength(1);
  expect(alice.feedback[0]).toMatchObject({ comment: "solved it", source: "cli" });
}, 30_000);

it("says to use --proxy when --store names a running proxy's directory, and names a wrong control key", async () => {
  const locked = await inProcess(["sessions", "list", "--store", dir]);
  expect(locked.code).toBe(2);
  expect(locked.stderr).toContain(`the store at ${dir} is in use`);
  expect(locked.stderr).toContain("through that proxy with --proxy URL instead of --store");

  process.env.PROXY_CONTROL_KEY = "not-the-key-000";
  try {
    const r = await inProcess(["sessions", "list", "--proxy", (proxy as RecordingProxy).url]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("refused the control key: set $PROXY_CONTROL_KEY");
    expect(r.stderr).not.toContain("not-the-key-000");
  } finally {
    process.env.PROXY_CONTROL_KEY = CONTROL;
  }
}, 30_000);

it("usage mistakes name the option and what it expects", async () => {
  const cases: [string[], string][] = [
    [["feedback", "trj_x", "--store", dir], "nothing to send: give --reward R"],
    [["feedback", "trj_x", "--reward", "high"], '--reward must be a number; got "high".'],
    [
      ["feedback", "trj_x", "--metric", "speed"],
      '--metric must be NAME=VALUE with a number or true/false as the value; got "speed".',
    ],
    [["feedback", "trj_x", "--reward", "1", "--eligible", "--not-eligible"], "not both"],
    [["feedback", "--reward", "1"], "missing ID."],
    [
      ["sessions", "list", "--store", dir, "--proxy", "http://127.0.0.1:1"],
      "give either --store DIR or --proxy URL, not both",
    ],
    [["sessions", "list", "--proxy", "localhost:8400"], "--proxy must be the http:// or https://"],
    [["sessions", "list", "--store", path.join(dir, "nope")], "does not exist: give --store"],
    [["sessions", "list", "--limit", "0"], '--limit must be an integer above 0; got "0".'],
    [["sessions", "show"], "missing ID."],
  ];
  for (const [args, expected] of cases) {
    const r = await inProcess(args);
    expect(r.code, args.join(" ")).toBe(2);
    expect(r.stderr, args.join(" ")).toContain(expected);
  }
  const closed = await freePort();
  const down = await inProcess(["sessions", "list", "--proxy", `http://127.0.0.1:${closed}`]);
  expect(down.code).toBe(1);
  expect(down.stderr).toContain(
    `could not reach the proxy at http://127.0.0.1:${closed} (ECONNREFUSED): is it running there?`,
  );
});

it("reads the store directly once the proxy has stopped, and gives feedback there (a real process)", async () => {
  await stopProxy();
  const state = mkdtempSync(path.join(tmpdir(), "sessions-state-"));
  try {
    const env = { PROXY_CONTROL_KEY: undefined, TRAJECTORY_RECORDER_STATE_DIR: state };
    const gave = await cli(["feedback", ids.bob as string, "--reward", "0.5", "--store", dir], env);
    expect(gave.stderr).toBe("");
    expect(gave.code).toBe(0);
    expect(gave.stdout).toBe(`Feedback 2 for ${ids.bob} stored: reward 0.5.\n`);

    const list = await cli(["sessions", "list", "--store", dir], env);
    expect(list.code).toBe(0);
    const row = (session: string) =>
      list.stdout.split("\n").find((l) => l.includes(` ${session} `)) as string;
    expect(
      row("alice")
        .split(/\s{2,}/)
        .slice(1, 7),
    ).toEqual(["alice", "finished", "2", "1", "yes", "1"]);
    // The later --not-eligible still holds: eligibility is what the latest feedback said.
    expect(
      row("bob")
        .split(/\s{2,}/)
        .slice(1, 7),
    ).toEqual(["bob", "finished", "1", "0.5", "no", "2"]);

    // Without --store or --proxy: the default directory under the state directory.
    process.env.TRAJECTORY_RECORDER_STATE_DIR = state;
    const none = await inProcess(["sessions", "list"]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain(
      `the default store directory ${path.join(state, "store")} does not exist`,
    );
  } finally {
    delete process.env.TRAJECTORY_RECORDER_STATE_DIR;
    rmSync(state, { recursive: true, force: true });
  }
}, 60_000);
