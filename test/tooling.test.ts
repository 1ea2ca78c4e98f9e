import { VERSION } from "openai/version";
import { describe, expect, it } from "vitest";

describe("test matrix", () => {
  it("loads the openai major version the matrix leg asks for", () => {
    const want = process.env.OPENAI_MAJOR ?? "6";
    expect(VERSION.split(".")[0]).toBe(want);
  });
});
