// recorder.rollout's scoreError: an error fn throws becomes a score when the
// scorer says so, and stays an error otherwise.
import { Recorder } from "trajectory-recorder";
import { RolloutAbortedError } from "trajectory-recorder/errors";
import { describe, expect, it } from "vitest";

class LoopError extends Error {}
const loops = () => {
  throw new LoopError("looped 4 times");
};
const quiet = () => new Recorder({ logger: { warn() {} } });

describe("recorder.rollout(fn, { scoreError })", () => {
  it("resolves with the trajectory, the scorer's reward and a line in logs", async () => {
    const t = await quiet().rollout(loops, {
      scoreError: (e) => (e instanceof LoopError ? 0.25 : undefined),
    });
    expect(t.reward).toBe(0.25);
    expect(t.logs).toContain(
      "rollout ended in an error, scored 0.25 by options.scoreError: looped 4 times",
    );
  });

  it("throws the error when the scorer returns undefined or null, throws, or returns no finite number", async () => {
    const recorder = quiet();
    for (const scoreError of [
      () => undefined,
      () => null,
      () => {
        throw new Error("scorer broke");
      },
      () => Number.NaN,
      () => "1" as unknown as number,
    ])
      await expect(recorder.rollout(loops, { scoreError })).rejects.toBeInstanceOf(LoopError);
  });

  it("never scores an aborted rollout", async () => {
    let asked = 0;
    const rejected = quiet().rollout(() => new Promise(() => {}), {
      timeout: 20,
      scoreError: () => {
        asked++;
        return 0;
      },
    });
    await expect(rejected).rejects.toBeInstanceOf(RolloutAbortedError);
    expect(asked).toBe(0);
  });

  it("refuses a scorer that is not a function, naming the option", async () => {
    await expect(quiet().rollout(loops, { scoreError: 0 as never })).rejects.toThrow(
      /options\.scoreError: expected a function/,
    );
  });
});
