// Runs the CLI as a user would: a separate node process (tsx's loader on the
// sources), with its own environment, collecting stdout, stderr and the exit code.
import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../..", import.meta.url));
const entry = fileURLToPath(new URL("../../src/cli/index.ts", import.meta.url));

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function env(extra: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { ...process.env };
  delete out.WANDB_API_KEY;
  delete out.TRAINING_SERVICE_BASE_URL;
  delete out.EMULATOR_API_KEYS;
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) delete out[k];
    else out[k] = v;
  }
  return out;
}

export function start(args: string[], extraEnv: Record<string, string | undefined> = {}) {
  // The Lua hooks let `--store redis://` load the BullMQ integration's scripts from source.
  const lua = path.join(root, "scripts/lua-hooks.mjs");
  return spawn(process.execPath, ["--import", "tsx", "--import", lua, entry, ...args], {
    cwd: root,
    env: env(extraEnv),
    stdio: ["ignore", "pipe", "pipe"],
  });
}

/** Runs `trajectory-recorder ...args` to its end. */
export function cli(
  args: string[],
  extraEnv: Record<string, string | undefined> = {},
): Promise<Run> {
  const child = start(args, extraEnv);
  return collect(child);
}

export function collect(child: ChildProcess): Promise<Run> {
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr?.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  return new Promise((resolve) => {
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** Resolves with everything printed on stdout once `re` matches it. */
export function waitForOutput(child: ChildProcess, re: RegExp): Promise<string> {
  let text = "";
  return new Promise((resolve, reject) => {
    child.stdout?.on("data", (d: Buffer) => {
      text += d.toString();
      if (re.test(text)) resolve(text);
    });
    child.on("close", (code) => reject(new Error(`exited ${code} before printing ${re}: ${text}`)));
  });
}

/**
 * Runs the same command in this process, through the entry point's `main`
 * with captured streams (a child process per call costs seconds under load).
 * The spawned `cli()` covers what only a real process shows: exit codes,
 * environment, the bin.
 */
export async function inProcess(
  args: string[],
  options: { tty?: boolean; answers?: string[] } = {},
): Promise<Run & { asked: string[] }> {
  const { main } = await import("../../src/cli/main.js");
  let stdout = "";
  let stderr = "";
  const asked: string[] = [];
  const answers = [...(options.answers ?? [])];
  const code = await main(args, {
    stdout: { write: (s: string) => (stdout += s) },
    stderr: { write: (s: string) => (stderr += s), isTTY: options.tty === true },
    // A terminal to answer on only when the test gives answers.
    stdin: { isTTY: options.answers !== undefined },
    ask: async (question) => {
      asked.push(question);
      return answers.shift() ?? "";
    },
  });
  return { code, stdout, stderr, asked };
}
