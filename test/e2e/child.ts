// Runs a fixture in a child process with tsx's loader, collecting its output.
import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../..", import.meta.url));
/** tsx's loader, and the BullMQ integration's .lua scripts loaded as text (as the build inlines them). */
const TSX = ["--import", "tsx", "--import", path.join(root, "scripts/lua-hooks.mjs")];

export interface Child {
  proc: ChildProcess;
  output: () => string;
  waitFor: (re: RegExp) => Promise<void>;
  exit: Promise<number | null>;
}

/**
 * Starts `test/e2e/fixtures/<fixture>` with `args`. `proc` is the process
 * running the fixture itself: node with tsx's loader, not the `tsx` command,
 * which runs the script in a second process and cannot pass a SIGKILL on
 * (the script would live on, orphaned, after `proc.kill("SIGKILL")`).
 */
export function runChild(fixture: string, args: string[]): Child {
  const file = path.join(root, "test/e2e/fixtures", fixture);
  const proc = spawn(process.execPath, [...TSX, file, ...args], {
    cwd: root,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  const listeners: (() => void)[] = [];
  const onData = (d: Buffer) => {
    out += d.toString();
    for (const l of listeners) l();
  };
  proc.stdout?.on("data", onData);
  proc.stderr?.on("data", onData);
  const exit = new Promise<number | null>((resolve) => proc.on("exit", (code) => resolve(code)));
  return {
    proc,
    output: () => out,
    exit,
    waitFor: (re) =>
      new Promise((resolve, reject) => {
        const check = () => re.test(out) && resolve();
        listeners.push(check);
        check();
        exit.then(() => reject(new Error(`child exited before ${re}: ${out}`)));
      }),
  };
}
