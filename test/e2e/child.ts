// Runs a fixture in a child process through tsx, collecting its output.
import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../..", import.meta.url));
const tsx = path.join(root, "node_modules/.bin/tsx");

export interface Child {
  proc: ChildProcess;
  output: () => string;
  waitFor: (re: RegExp) => Promise<void>;
  exit: Promise<number | null>;
}

/** Starts `test/e2e/fixtures/<fixture>` with `args`. */
export function runChild(fixture: string, args: string[]): Child {
  const file = path.join(root, "test/e2e/fixtures", fixture);
  const proc = spawn(tsx, [file, ...args], { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
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
