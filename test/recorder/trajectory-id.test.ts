import { describe, expect, it } from "vitest";
import { Recorder } from "../../src/index.js";

describe("trajectory ids", () => {
  it("gives every rollout its own trj_ id of 24 hex digits, past the 256 ids drawn at a time", async () => {
    const recorder = new Recorder();
    const ids: string[] = [];
    for (let i = 0; i < 700; i++) ids.push((await recorder.rollout(() => {})).id);
    for (const id of ids) expect(id).toMatch(/^trj_[0-9a-f]{24}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
