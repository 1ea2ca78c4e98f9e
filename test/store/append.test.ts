// A recorded session is written as appends: each call writes what it added,
// and the store gives back exactly the trajectory's own JSON.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { Recorder } from "trajectory-recorder";
import { describe, expect, it } from "vitest";
import { TrajectoryStore } from "../../src/store/index.js";
import { keptLogger, tempDir } from "./helpers.js";

const TOOLS = [
  { type: "function" as const, function: { name: "lookup", parameters: { type: "object" } } },
];

let tokenSeed = 0;
/** A Choice with `n` sampled tokens and top-2 logprobs, as vLLM answers. */
function choice(text: string, index = 0) {
  const token = (t: string) => ({ token: t, logprob: -0.5, bytes: [...Buffer.from(t)] });
  const content = [...text].map((c) => ({ ...token(c), top_logprobs: [token(c), token("x")] }));
  return {
    index,
    finish_reason: "stop" as const,
    logprobs: { content, refusal: null },
    message: { role: "assistant" as const, content: text, refusal: null },
    token_ids: content.map(() => tokenSeed++),
  };
}

type Msg = { role: "system" | "user" | "assistant"; content: string };

/** One recorded call through the handle's state, as a wrapped client records it. */
function record(
  handle: ReturnType<Recorder["open"]>,
  messages: Msg[],
  answers: string[],
  tools?: typeof TOOLS,
) {
  const request = { model: "policy", messages, ...(tools ? { tools } : {}) };
  const slot = handle.state.startCall(request);
  handle.state.recordCompletion({
    request,
    choices: answers.map((a, i) => choice(a, i)),
    response: { id: "c", model: "policy" },
    policy: true,
  });
  handle.state.endCall(slot);
  handle.flush();
}

/** The kinds of the store's records, in the order written. */
function kinds(dir: string): string[] {
  return readdirSync(dir)
    .filter((n) => n.endsWith(".jsonl"))
    .sort()
    .flatMap((n) => readFileSync(path.join(dir, n), "utf8").split("\n").filter(Boolean))
    .map((line) => (JSON.parse(line) as { k: string }).k);
}

/** A session of calls with n > 1 choices (additional histories), tools and a judge. */
function session(handle: ReturnType<Recorder["open"]>) {
  const sys: Msg = { role: "system", content: "be brief" };
  const q1: Msg = { role: "user", content: "first?" };
  record(handle, [sys, q1], ["one", "uno"]);
  const a1: Msg = { role: "assistant", content: "one" };
  const q2: Msg = { role: "user", content: "second?" };
  record(handle, [sys, q1, a1, q2], ["two", "dos", "deux"]);
  // A judge: another conversation, with tools: an additional history of its own.
  record(handle, [{ role: "user", content: "grade it" }], ["fine"], TOOLS);
  handle.trajectory.reward = 0.5;
  handle.trajectory.metrics.turns = 3;
  handle.trajectory.log("judged");
  const a2: Msg = { role: "assistant", content: "two" };
  record(handle, [sys, q1, a1, q2, a2, { role: "user", content: "third?" }], ["three"]);
}

describe("a session written as appends", () => {
  it("gives back the trajectory's own JSON after every call, and after a reopen", async () => {
    const dir = tempDir();
    const store = await TrajectoryStore.open({ dir });
    const recorder = new Recorder({ store });
    const handle = recorder.open({ metadata: { user: "u1" } });
    const expected = () => JSON.parse(JSON.stringify(handle.trajectory));
    const sys: Msg = { role: "system", content: "be brief" };
    record(handle, [sys, { role: "user", content: "first?" }], ["one", "uno"]);
    expect(store.get(handle.id)?.trajectory).toEqual(expected());
    session(handle);
    const open = store.get(handle.id);
    expect(open?.trajectory).toEqual(expected());
    expect(open?.trajectory.additional_histories.length).toBeGreaterThan(1);
    expect(open?.calls).toBe(handle.calls);
    expect(open?.metadata).toEqual({ user: "u1" });
    // One put, then appends only.
    expect(kinds(dir).filter((k) => k === "put" || k === "append")).toEqual([
      "put",
      ...Array(handle.calls - 1).fill("append"),
    ]);
    await store.close();

    const reopened = await TrajectoryStore.open({ dir });
    expect(reopened.get(handle.id)?.trajectory).toEqual(expected());
    expect(reopened.get(handle.id)?.calls).toBe(handle.calls);
    await reopened.close();
  });

  it("writes each call's own bytes, not the whole state again", async () => {
    const dir = tempDir();
    const store = await TrajectoryStore.open({ dir });
    const handle = new Recorder({ store }).open();
    const messages: Msg[] = [];
    const sizes: number[] = [];
    for (let i = 0; i < 4; i++) {
      messages.push({ role: "user", content: `q${i}` });
      const before = store.stats().bytes;
      record(handle, [...messages], ["a".repeat(200)]);
      messages.push({ role: "assistant", content: "a".repeat(200) });
      sizes.push(store.stats().bytes - before);
    }
    // The 4th call writes about what the 2nd did, not twice as much.
    expect(sizes[3]).toBeLessThan((sizes[1] as number) * 1.2);
    await store.close();
  });

  it("writes the full state when the histories were rearranged, and at the end", async () => {
    const dir = tempDir();
    const store = await TrajectoryStore.open({ dir });
    const handle = new Recorder({ store }).open();
    session(handle);
    // Something other than a push: the written prefix is gone.
    handle.trajectory.messages_and_choices.splice(1, 1);
    record(handle, [{ role: "user", content: "grade it" }], ["again"], TOOLS);
    expect(kinds(dir).at(-1)).toBe("put");
    expect(store.get(handle.id)?.trajectory).toEqual(JSON.parse(JSON.stringify(handle.trajectory)));
    handle.finish();
    expect(kinds(dir).at(-1)).toBe("put");
    const done = store.get(handle.id);
    expect(done?.status).toBe("finished");
    expect(done?.trajectory).toEqual(JSON.parse(JSON.stringify(handle.trajectory)));
    await store.close();
  });

  it("refuses an append that does not continue the stored state, so the writer puts in full", async () => {
    const dir = tempDir();
    const store = await TrajectoryStore.open({ dir });
    const fields = {
      tools: null,
      reward: 0,
      initial_policy_version: null,
      final_policy_version: null,
      metrics: {},
      metadata: {},
      logs: [],
    };
    const append = (id: string, main: number) =>
      store.append({
        id,
        session: null,
        status: "open",
        calls: 2,
        from: { main, histories: [] },
        main: [{ role: "user", content: "more" }],
        histories: [],
        fields,
      });
    expect(append("unknown", 0)).toBe(false);
    store.put({
      id: "t",
      session: null,
      status: "open",
      calls: 1,
      trajectory: { ...fields, messages_and_choices: [], additional_histories: [] },
    });
    expect(append("t", 3)).toBe(false);
    expect(append("t", 0)).toBe(true);
    expect(store.get("t")?.trajectory.messages_and_choices).toHaveLength(1);
    await store.close();
  });

  it("keeps a call interrupted after appends on top of the state they add up to", async () => {
    const dir = tempDir();
    const store = await TrajectoryStore.open({ dir });
    const handle = new Recorder({ store }).open();
    session(handle);
    const before = JSON.parse(JSON.stringify(handle.trajectory));
    const sent = [...handle.trajectory.messages(), { role: "user", content: "fourth?" }] as Msg[];
    // The call begins and the process stops before its answer is recorded.
    handle.state.startCall({ model: "policy", messages: sent });
    store.progressCall(handle.id, handle.calls, { content: "Four" });
    await store.close();

    const { lines, logger } = keptLogger();
    const reopened = await TrajectoryStore.open({ dir, logger });
    const stored = reopened.get(handle.id);
    expect(stored?.interrupted).toBe(true);
    expect(stored?.trajectory.messages_and_choices).toEqual([
      ...before.messages_and_choices,
      { role: "user", content: "fourth?" },
      { role: "assistant", content: "Four" },
    ]);
    expect(stored?.trajectory.additional_histories).toEqual(before.additional_histories);
    expect(lines.join("\n")).toMatch(/1 call was interrupted/);
    await reopened.close();
  });

  it("merges a put and its appends into one put when it compacts", async () => {
    const dir = tempDir();
    const { logger } = keptLogger();
    const store = await TrajectoryStore.open({
      dir,
      logger,
      segmentBytes: 32 * 1024,
      maxBytes: 256 * 1024,
    });
    const recorder = new Recorder({ store });
    const kept = recorder.open();
    session(kept);
    const expected = JSON.parse(JSON.stringify(kept.trajectory));
    store.addFeedback({ trajectory_id: kept.id, reward: 1 });
    // Other sessions fill the store until compaction copies the first one's records.
    const first = path.join(dir, "seg-000001.jsonl");
    for (let i = 0; existsSync(first) && i < 500; i++) {
      const other = recorder.open();
      record(other, [{ role: "user", content: `filler ${i}` }], ["x".repeat(40)]);
      other.finish();
    }
    expect(existsSync(first)).toBe(false);
    const stored = store.get(kept.id);
    expect(stored?.trajectory).toEqual({ ...expected, reward: 1 });
    await store.close();
    const merged = kinds(dir);
    expect(merged).not.toContain("append");
    const reopened = await TrajectoryStore.open({ dir, logger });
    expect(reopened.get(kept.id)?.trajectory).toEqual({ ...expected, reward: 1 });
    expect(reopened.get(kept.id)?.feedback).toHaveLength(1);
    await reopened.close();
  });
});
