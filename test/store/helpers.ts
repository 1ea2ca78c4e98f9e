// Shared by the store's tests: temp directories, a logger that keeps its
// lines, and trajectory JSON as the recorder writes it.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach } from "vitest";
import type { TrajectoryWire } from "../../src/wire/index.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A fresh directory, removed after the test. */
export function tempDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), "store-"));
  dirs.push(dir);
  return dir;
}

/** A logger that keeps what it is told. */
export function keptLogger() {
  const lines: string[] = [];
  return {
    lines,
    logger: { warn: (m: string) => lines.push(m), info: (m: string) => lines.push(m) },
  };
}

/** A trajectory of `calls` turns, each answer `text`. */
export function trajectory(calls: number, text = "ok"): TrajectoryWire {
  return {
    messages_and_choices: Array.from({ length: calls }, (_, i) => [
      { role: "user" as const, content: `question ${i + 1}` },
      {
        finish_reason: "stop",
        index: 0,
        logprobs: null,
        message: { role: "assistant" as const, content: text, refusal: null },
      },
    ]).flat(),
    tools: null,
    additional_histories: [],
    reward: 0,
    initial_policy_version: null,
    final_policy_version: null,
    metrics: { latency_ms: 12 },
    metadata: {},
    logs: [],
  };
}
