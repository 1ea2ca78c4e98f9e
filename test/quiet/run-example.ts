// Runs a script as a user does (`npx tsx file`): its own node process, tsx's
// loader on the sources, collecting stdout, stderr and the exit code.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

export const root = fileURLToPath(new URL("../..", import.meta.url));

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function runScript(file: string, args: string[] = [], timeoutMs = 120_000): Promise<Run> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  // The examples fall back to the embedded emulator without these.
  for (const key of ["BASE_URL", "API_KEY", "MODEL", "WANDB_API_KEY", "TRAINING_SERVICE_BASE_URL"])
    delete env[key];
  const child = spawn(process.execPath, ["--import", "tsx", file, ...args], { cwd: root, env });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (c: Buffer) => {
    stdout += c.toString();
  });
  child.stderr.on("data", (c: Buffer) => {
    stderr += c.toString();
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
