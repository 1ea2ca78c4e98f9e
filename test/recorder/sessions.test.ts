// Sessions in process: a deployed service records conversations that outlive
// any one request (recorder.session, a wrapped client bound to a session or
// naming it per call), each call's receipt, and the store written after
// every call.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import OpenAI from "openai";
import { InvalidArgumentError, Recorder } from "trajectory-recorder";
import { TrajectoryStore } from "trajectory-recorder/store";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startVllmServer, type VllmServer } from "../helpers/vllm-server.js";

let upstream: VllmServer;
beforeAll(async () => {
  upstream = await startVllmServer({ respond: (_body, i) => ({ content: `answer ${i}` }) });
});
afterAll(() => upstream.close());

const client = () => new OpenAI({ baseURL: upstream.baseURL, apiKey: "k", maxRetries: 0 });
const ask = (content: string) => ({ model: "m", messages: [{ role: "user" as const, content }] });

describe("a session", () => {
  it("records every call run in it into one trajectory, with a receipt per call", async () => {
    const recorder = new Recorder();
    const openai = recorder.wrap(client());
    const session = recorder.session("conv-1");
    const a = await session.run(() => openai.chat.completions.create(ask("hi")));
    // A later request (another HTTP request of the service) finds the same session.
    const again = recorder.session("conv-1");
    expect(again).toBe(session);
    const stream = await again.run(() =>
      openai.chat.completions.create({ ...ask("hi"), stream: true }),
    );
    for await (const _ of stream);
    expect(recorder.receiptOf(a)).toEqual({ trajectory_id: session.id, call: 1 });
    expect(recorder.receiptOf(stream)).toEqual({ trajectory_id: session.id, call: 2 });
    expect(recorder.receiptOf({})).toBeUndefined();
    expect(session.trajectory.id).toBe(session.id);
    expect(session.id).toMatch(/^trj_[0-9a-f]{24}$/);
    // Readable before it ends.
    expect(session.trajectory.toJSON().messages_and_choices).toHaveLength(2);
    const t = recorder.endSession("conv-1");
    expect(t).toBe(session.trajectory);
    expect(t?.metadata.session_id).toBe("conv-1");
    expect(recorder.getSession("conv-1")).toBeUndefined();
    expect(recorder.endSession("conv-1")).toBeUndefined();
    // A new call under the same id opens a new trajectory.
    expect(recorder.session("conv-1").id).not.toBe(session.id);
    await recorder.close();
    expect(recorder.openSessions).toBe(0);
  });

  it("records calls made outside any rollout by a client bound to a session, or naming one per call", async () => {
    const recorder = new Recorder();
    const bound = recorder.wrap(client(), { session: "bound-1" });
    const free = recorder.wrap(client());
    await bound.chat.completions.create(ask("one"));
    await free.chat.completions.create(ask("two"), {
      headers: { "x-trajectory-session": "named-1" },
    });
    await free.chat.completions.create(ask("not recorded"));
    expect(recorder.getSession("bound-1")?.calls).toBe(1);
    expect(recorder.getSession("named-1")?.calls).toBe(1);
    expect(recorder.openSessions).toBe(2);
    let current = "ctx-a";
    const fromContext = recorder.wrap(client(), { session: () => current });
    await fromContext.chat.completions.create(ask("a"));
    current = "ctx-b";
    await fromContext.chat.completions.create(ask("b"));
    expect(recorder.getSession("ctx-a")?.calls).toBe(1);
    expect(recorder.getSession("ctx-b")?.calls).toBe(1);
    await recorder.close();
  });

  it("refuses a bad session id, naming the argument", () => {
    const recorder = new Recorder();
    expect(() => recorder.session("has space")).toThrow(InvalidArgumentError);
    expect(() => recorder.session("has space")).toThrow(/id/);
    expect(() => recorder.wrap(client(), { session: "a b" })).toThrow(/options\.session/);
    expect(() => new Recorder({ sessions: { idleTimeoutMs: 0 } })).toThrow(
      /options\.sessions\.idleTimeoutMs/,
    );
  });

  it("ends after its idle timeout, and the oldest one when too many are open", async () => {
    const ended: string[] = [];
    const recorder = new Recorder({
      sessions: {
        idleTimeoutMs: 40,
        maxOpen: 2,
        onEnd: (t) => ended.push(String(t.metadata.session_id)),
      },
    });
    recorder.session("s1");
    await new Promise((r) => setTimeout(r, 5));
    recorder.session("s2");
    recorder.session("s3");
    expect(ended).toEqual(["s1"]);
    expect(recorder.getSession("s1")).toBeUndefined();
    await new Promise((r) => setTimeout(r, 150));
    expect(ended.sort()).toEqual(["s1", "s2", "s3"]);
    expect(recorder.openSessions).toBe(0);
    await recorder.close();
  });
});

describe("with a store", () => {
  it("writes the session right after every call (flush() at once) and when it ends", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "trr-sessions-"));
    const store = await TrajectoryStore.open({ dir });
    try {
      const recorder = new Recorder({ store });
      const openai = recorder.wrap(client(), { session: "stored-1" });
      const res = await openai.chat.completions.create(ask("hi"));
      const receipt = recorder.receiptOf(res);
      expect(receipt?.call).toBe(1);
      const id = receipt?.trajectory_id as string;
      // Written once the caller's code has run on (the next turn of the event loop).
      expect(store.has(id)).toBe(false);
      await recorder.getSession("stored-1")?.saved();
      const open = store.get(id);
      expect(open?.status).toBe("open");
      expect(open?.session).toBe("stored-1");
      expect(open?.trajectory.messages_and_choices).toHaveLength(2);
      await openai.chat.completions.create({
        model: "m",
        messages: [
          { role: "user", content: "hi" },
          { role: "assistant", content: String(res.choices[0]?.message.content) },
          { role: "user", content: "again" },
        ],
      });
      recorder.getSession("stored-1")?.flush();
      expect(store.get(id)?.trajectory.messages_and_choices).toHaveLength(4);
      recorder.endSession("stored-1");
      expect(store.get(id)?.status).toBe("finished");
      // A rollout is stored too, under its t.id.
      const t = await recorder.rollout(async () => {
        await recorder.wrap(client()).chat.completions.create(ask("r"));
      });
      expect(store.get(t.id)?.session).toBeNull();
      await recorder.close();
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("an open handle records across calls and finishes once", async () => {
    const recorder = new Recorder();
    const openai = recorder.wrap(client());
    const handle = recorder.open({ metadata: { ticket: "T-1" } });
    await handle.run(() => openai.chat.completions.create(ask("x")));
    handle.trajectory.reward = 1;
    const t = handle.finish();
    expect(handle.ended).toBe(true);
    expect(handle.finish()).toBe(t);
    expect(t.toJSON().metadata).toEqual({ ticket: "T-1" });
    // Calls after the end are not recorded.
    await handle.run(() => openai.chat.completions.create(ask("late")));
    expect(t.toJSON().messages_and_choices).toHaveLength(2);
  });
});
