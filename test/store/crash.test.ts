import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { StoreLockedError, TrajectoryStore } from "../../src/store/index.js";
import { killWriter, startWriter, waitForLines } from "./spawn.js";

const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(path.join(tmpdir(), "store-crash-"));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
const quiet = () => {
  const lines: string[] = [];
  return {
    lines,
    logger: { warn: (m: string) => lines.push(m), info: (m: string) => lines.push(m) },
  };
};

describe("a store whose process is killed with SIGKILL", () => {
  it("keeps every put that returned before the kill, and no half-written record", async () => {
    const dir = tempDir();
    const writer = startWriter("puts", dir);
    await waitForLines(writer, 400);
    await killWriter(writer);
    const printed = new Map<string, number>();
    for (const line of writer.lines) {
      const [id, calls] = line.split(" ");
      printed.set(id as string, Number(calls));
    }

    const { logger } = quiet();
    const store = await TrajectoryStore.open({ dir, logger });
    for (const [id, calls] of printed) {
      const stored = store.get(id);
      expect(stored, id).toBeDefined();
      // The kill may land after a put returned and before its line was printed.
      expect(stored?.calls).toBeGreaterThanOrEqual(calls);
      expect(stored?.trajectory.messages_and_choices).toHaveLength(2 * (stored?.calls ?? 0));
    }
    await store.close();
    // Every line left on disk is whole JSON: a cut write was cut from the file.
    for (const name of readdirSync(dir).filter((n) => n.endsWith(".jsonl"))) {
      const text = readFileSync(path.join(dir, name), "utf8");
      expect(text === "" || text.endsWith("\n")).toBe(true);
      for (const line of text.split("\n").filter(Boolean))
        expect(() => JSON.parse(line)).not.toThrow();
    }
  }, 60_000);

  it("keeps every append that returned before the kill, on top of its put", async () => {
    const dir = tempDir();
    const writer = startWriter("appends", dir);
    await waitForLines(writer, 400);
    await killWriter(writer);
    const printed = new Map<string, number>();
    for (const line of writer.lines) {
      const [id, calls] = line.split(" ");
      printed.set(id as string, Number(calls));
    }

    const { logger } = quiet();
    const store = await TrajectoryStore.open({ dir, logger });
    for (const [id, calls] of printed) {
      const stored = store.get(id);
      expect(stored, id).toBeDefined();
      expect(stored?.calls).toBeGreaterThanOrEqual(calls);
      const n = stored?.calls ?? 0;
      expect(stored?.trajectory.messages_and_choices).toHaveLength(2 * n);
      expect(stored?.trajectory.messages_and_choices.at(-2)).toEqual({
        role: "user",
        content: `question ${n - 1}`,
      });
      if (n > 1) expect(stored?.trajectory.logs).toEqual([`call ${n}`]);
    }
    await store.close();
  }, 60_000);

  it("keeps a call cut mid-answer as far as it got, as context, named in the logs", async () => {
    const dir = tempDir();
    const writer = startWriter("interrupt", dir);
    await waitForLines(writer, 1);
    await killWriter(writer);

    const { lines, logger } = quiet();
    const store = await TrajectoryStore.open({ dir, logger });
    const a = store.get("a");
    expect(a?.interrupted).toBe(true);
    expect(a?.calls).toBe(2);
    expect(a?.status).toBe("open");
    expect(a?.trajectory.messages_and_choices.slice(2)).toEqual([
      { role: "user", content: "and then?" },
      { role: "assistant", content: "Then we went" },
    ]);
    expect(a?.trajectory.logs.at(-1)).toMatch(
      /^call 2 was interrupted: the process stopped mid-call; it is kept as far as it got/,
    );
    // A call begun before anything was stored: its request, no answer, the log line.
    const b = store.get("b");
    expect(b?.session).toBe("s2");
    expect(b?.trajectory.messages_and_choices).toEqual([{ role: "user", content: "hi" }]);
    expect(b?.trajectory.logs[0]).toMatch(/call 1 was interrupted.*no answer had arrived/);
    expect(lines.join("\n")).toMatch(/2 calls were interrupted by the previous process stopping/);
    await store.close();

    // Recovered once: a second open finds nothing to recover, the flag stays.
    const again = quiet();
    const reopened = await TrajectoryStore.open({ dir, logger: again.logger });
    expect(
      reopened.get("a")?.trajectory.logs.filter((l) => l.includes("interrupted")),
    ).toHaveLength(1);
    expect(reopened.get("a")?.interrupted).toBe(true);
    expect(again.lines).toEqual([]);
    await reopened.close();
  }, 60_000);

  it("refuses a directory a live process holds, naming its pid, and takes over the lock once it is dead", async () => {
    const dir = tempDir();
    const writer = startWriter("hold", dir);
    await waitForLines(writer, 1);
    const refused = await TrajectoryStore.open({ dir }).catch((e: unknown) => e);
    expect(StoreLockedError.isInstance(refused)).toBe(true);
    expect((refused as StoreLockedError).pid).toBe(writer.child.pid);
    expect((refused as Error).message).toContain(`process ${writer.child.pid}`);
    await killWriter(writer);

    const store = await TrajectoryStore.open({ dir });
    expect(store.stats().trajectories).toBe(0);
    await store.close();
  }, 60_000);
});
