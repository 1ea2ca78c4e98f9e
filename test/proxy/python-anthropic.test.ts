// Issue #49's done-when, through the endpoint: the official Python
// `anthropic` SDK in a subprocess, given only ANTHROPIC_BASE_URL =
// t.anthropicBaseURL and ANTHROPIC_API_KEY = t.apiKey, runs a tool loop
// (created and streamed) and is recorded with every tool call and its result
// paired; the key it sends as x-api-key never goes upstream.
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { Recorder, TrajectoryGroup, validateGroup } from "trajectory-recorder";
import { type Emulator, startEmulator } from "trajectory-recorder/emulator";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type MessagesUpstream, startMessagesUpstream } from "../endpoint/messages-upstream.js";
import { python } from "./helpers.js";

const AGENT = fileURLToPath(new URL("./fixtures/anthropic_agent.py", import.meta.url));
const UPSTREAM_KEY = "upstream-key-123456";

let upstream: MessagesUpstream;
let emu: Emulator;
beforeAll(async () => {
  upstream = await startMessagesUpstream();
  emu = await startEmulator({ port: 0, apiKeys: ["emu-key-123456"] });
});
afterAll(async () => {
  await upstream.close();
  await emu.close();
});

function runAgent(env: Record<string, string>): Promise<{ answer: string | null; id: string }> {
  return new Promise((resolve, reject) => {
    execFile(
      python(),
      [AGENT],
      { env: { PATH: process.env.PATH, ...env }, timeout: 60_000 },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`anthropic_agent.py failed: ${error.message}\n${stderr}`));
        else resolve(JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}"));
      },
    );
  });
}

for (const stream of [false, true])
  it(`records the Python anthropic SDK's tool loop through t.anthropicBaseURL${stream ? " (messages.stream)" : ""}`, async () => {
    const recorder = new Recorder({
      upstream: { baseURL: upstream.baseURL, apiKey: UPSTREAM_KEY },
    });
    const sent = upstream.requests.length;
    let out: { answer: string | null; id: string } | undefined;
    let key = "";
    const t = await recorder.rollout(async (t) => {
      key = t.apiKey;
      out = await runAgent({
        ANTHROPIC_BASE_URL: t.anthropicBaseURL,
        ANTHROPIC_API_KEY: t.apiKey,
        STREAM: stream ? "1" : "0",
      });
      t.reward = out.answer === "It is 5." ? 1 : 0;
    });
    await recorder.close();
    expect(out).toEqual({ answer: "It is 5.", id: `msg_${sent + 2}` });
    const history = t.messages_and_choices as unknown as Array<Record<string, unknown>>;
    expect(history[0]).toEqual({ role: "system", content: "Use the tools." });
    expect(history[2]).toMatchObject({
      role: "assistant",
      content: "Let me add them.",
      tool_calls: [
        { id: "toolu_1", type: "function", function: { name: "add", arguments: '{"a":2,"b":3}' } },
      ],
    });
    expect(history[3]).toMatchObject({ role: "tool", tool_call_id: "toolu_1", content: "5" });
    expect(history.at(-1)).toEqual({ role: "assistant", content: "It is 5." });
    // A teacher's group holds no Choice: it validates as one.
    const check = validateGroup(new TrajectoryGroup([t]), {
      requireTrainable: false,
      mode: "warn",
      logger: { warn: () => {} },
    } as never);
    expect(check.problems).toEqual([]);
    for (const r of upstream.requests.slice(sent)) {
      expect(r.headers["x-api-key"]).toBe(UPSTREAM_KEY);
      expect(r.headers["anthropic-version"]).toBeTruthy();
      expect(JSON.stringify(r)).not.toContain(key);
    }
  });

for (const stream of [false, true])
  it(`records the Python anthropic SDK's tool loop on the emulator, every tool call paired with its result${stream ? " (streamed)" : ""}`, async () => {
    const recorder = new Recorder({ upstream: { baseURL: emu.url, apiKey: "emu-key-123456" } });
    const t = await recorder.rollout(async (t) => {
      await runAgent({
        ANTHROPIC_BASE_URL: t.anthropicBaseURL,
        ANTHROPIC_API_KEY: t.apiKey,
        STREAM: stream ? "1" : "0",
        FORCE_TOOL: "1",
      });
    });
    await recorder.close();
    const history = t.messages_and_choices as unknown as Array<Record<string, any>>;
    const calls = history.flatMap((m) => (m.role === "assistant" ? (m.tool_calls ?? []) : []));
    const results = history.filter((m) => m.role === "tool").map((m) => m.tool_call_id);
    expect(calls.length).toBeGreaterThan(0);
    expect(calls[0]).toMatchObject({ type: "function", function: { name: "add" } });
    // Every call the model made is answered in the history, by its id.
    expect(results.sort()).toEqual(calls.map((c: { id: string }) => c.id).sort());
    const check = validateGroup(new TrajectoryGroup([t]), {
      requireTrainable: false,
      mode: "warn",
      logger: { warn: () => {} },
    } as never);
    expect(check.problems).toEqual([]);
    expect(t.logs.join("\n")).not.toMatch(/dropped|left out/);
  });
