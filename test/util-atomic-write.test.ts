import { mkdtemp, readdir, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { atomicWriteFile } from "../src/util/atomic-write.js";

describe("atomicWriteFile", () => {
  it("replaces the content and leaves no temporary file behind", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "tr-atomic-"));
    const file = path.join(dir, "nested", "state.json");
    await atomicWriteFile(file, "first");
    await atomicWriteFile(file, "second");
    expect(await readFile(file, "utf8")).toBe("second");
    expect(await readdir(path.dirname(file))).toEqual(["state.json"]);
  });

  it("keeps concurrent writers from tearing the file", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "tr-atomic-"));
    const file = path.join(dir, "state.json");
    const bodies = Array.from({ length: 20 }, (_, i) =>
      JSON.stringify({ i, pad: "x".repeat(50_000) }),
    );
    await Promise.all(bodies.map((b) => atomicWriteFile(file, b)));
    const final = await readFile(file, "utf8");
    expect(bodies).toContain(final);
  });
});
