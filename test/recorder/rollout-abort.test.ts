import { currentRollout, InvalidArgumentError, Recorder } from "trajectory-recorder";
import { RolloutAbortedError } from "trajectory-recorder/errors";
import { describe, expect, it } from "vitest";

function record(content: string) {
  currentRollout()?.recordCompletion({
    request: { model: "m", messages: [{ role: "user", content: "q" }] },
    choices: [
      {
        index: 0,
        finish_reason: "stop",
        logprobs: null,
        message: { role: "assistant", content, refusal: null },
      },
    ],
  });
}

describe("recorder.rollout's signal and timeout", () => {
  it("ends a rollout at its timeout, keeping what it recorded and saying why in its logs", async () => {
    const recorder = new Recorder();
    let given: AbortSignal | undefined;
    const started = Date.now();
    const error = await recorder
      .rollout(
        async (_t, { signal }) => {
          given = signal;
          record("first");
          await new Promise(() => {});
        },
        { timeout: 50 },
      )
      .catch((e: unknown) => e);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(error).toBeInstanceOf(RolloutAbortedError);
    const aborted = error as RolloutAbortedError;
    expect(aborted.timedOut).toBe(true);
    expect(aborted.message).toMatch(/aborted after its timeout of 50 ms/);
    expect(given?.aborted).toBe(true);
    const json = aborted.trajectory.toJSON() as { logs: string[]; messages_and_choices: unknown[] };
    expect(json.messages_and_choices).toHaveLength(2);
    expect(json.logs.join("\n")).toMatch(/rollout aborted after its timeout of 50 ms/);
  });

  it("ends a rollout when its signal aborts; what the function does afterwards is not recorded", async () => {
    const recorder = new Recorder();
    const controller = new AbortController();
    let finish = () => {};
    const pending = recorder.rollout(
      async () => {
        record("before");
        await new Promise<void>((r) => (finish = r));
        record("after");
      },
      { signal: controller.signal },
    );
    await new Promise((r) => setTimeout(r, 10));
    controller.abort(new Error("user pressed stop"));
    const error = (await pending.catch((e: unknown) => e)) as RolloutAbortedError;
    expect(error).toBeInstanceOf(RolloutAbortedError);
    expect(error.timedOut).toBe(false);
    expect(error.message).toMatch(/by its signal \(user pressed stop\)/);
    finish();
    await new Promise((r) => setTimeout(r, 10));
    expect(error.trajectory.messages_and_choices).toHaveLength(2);
  });

  it("does not start a rollout whose signal already aborted", async () => {
    let ran = false;
    const error = await new Recorder()
      .rollout(
        () => {
          ran = true;
        },
        { signal: AbortSignal.abort() },
      )
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RolloutAbortedError);
    expect(ran).toBe(false);
  });

  it("returns the trajectory as before when the rollout ends in time", async () => {
    const t = await new Recorder().rollout(
      async () => {
        record("done");
      },
      { timeout: 5_000, signal: new AbortController().signal },
    );
    expect(t.messages_and_choices).toHaveLength(2);
    expect(t.logs.join()).not.toMatch(/aborted/);
  });

  it("refuses a signal or timeout it cannot use, naming the option", async () => {
    const recorder = new Recorder();
    for (const [opts, name] of [
      [{ timeout: -1 }, "options.timeout"],
      [{ timeout: Number.NaN }, "options.timeout"],
      [{ timeout: "5" }, "options.timeout"],
      [{ signal: {} }, "options.signal"],
    ] as const) {
      const error = await recorder.rollout(() => {}, opts as never).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect((error as InvalidArgumentError).argument).toBe(name);
    }
  });
});
