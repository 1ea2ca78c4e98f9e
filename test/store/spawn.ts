// Runs test/store/fixtures/writer.ts in its own node process (tsx's loader),
// as a deployed server runs: the store's tests kill it for real.
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../..", import.meta.url));

export type Writer = { child: ChildProcess; lines: string[]; exited: Promise<void> };

/** Starts the writer in `mode` on `dir`; `lines` fills with what it prints. */
export function startWriter(mode: string, dir: string): Writer {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", "test/store/fixtures/writer.ts", mode, dir],
    { cwd: root, stdio: ["ignore", "pipe", "pipe"] },
  );
  const lines: string[] = [];
  let rest = "";
  child.stdout?.setEncoding("utf8");
  child.stdout?.on("data", (chunk: string) => {
    const parts = (rest + chunk).split("\n");
    rest = parts.pop() ?? "";
    lines.push(...parts);
  });
  let stderr = "";
  child.stderr?.on("data", (d) => (stderr += d));
  // "close": after the pipes drained, so `lines` holds all the writer printed.
  const exited = new Promise<void>((resolve) => child.on("close", () => resolve()));
  child.on("exit", (code, signal) => {
    if (code !== null && code !== 0) console.error(`writer exited ${code}: ${stderr}`);
    void signal;
  });
  return { child, lines, exited };
}

/** Waits until the writer has printed `count` lines (or `ready`). */
export async function waitForLines(w: Writer, count: number, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (w.lines.length < count) {
    if (Date.now() > deadline || w.child.exitCode !== null)
      throw new Error(`The writer printed ${w.lines.length} lines, expected ${count}.`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Kills the writer with SIGKILL and waits for it to be gone. */
export async function killWriter(w: Writer): Promise<void> {
  w.child.kill("SIGKILL");
  await w.exited;
}
