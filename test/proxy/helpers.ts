// Shared by the recording endpoint's tests: the Python agent, id-free JSON.
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { venvPython } from "../setup/python.js";

export const AGENT = fileURLToPath(new URL("./fixtures/agent.py", import.meta.url));

/** The cached venv's python (vitest.config.ts left these tests out when there is none). */
export function python(): string {
  const p = venvPython();
  if (!p)
    throw new Error(
      "The Python openai SDK venv is missing: vitest.config.ts should have built it.",
    );
  return p;
}

/** Runs the Python agent once, as a subprocess given the rollout's endpoint in its environment. */
export function runPythonAgent(
  job: Record<string, unknown>,
  env: { OPENAI_BASE_URL: string; OPENAI_API_KEY: string },
): Promise<{ answer: string | null }> {
  return new Promise((resolve, reject) => {
    execFile(
      python(),
      [AGENT, JSON.stringify(job)],
      { env: { PATH: process.env.PATH, ...env }, timeout: 60_000 },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`agent.py failed: ${error.message}\n${stderr}`));
        else resolve(JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}"));
      },
    );
  });
}

/**
 * A trajectory's JSON with tool call ids numbered in order of appearance
 * ("ids aside"). The scripted server's prompt token ids hash the messages,
 * tool call ids included, so they go too (check them with wireMismatches).
 */
export function withoutIds(t: unknown): unknown {
  const ids = new Map<string, string>();
  const rename = (id: string) => {
    if (!ids.has(id)) ids.set(id, `call_${ids.size}`);
    return ids.get(id) as string;
  };
  return JSON.parse(JSON.stringify(t), (key, value) =>
    key === "prompt_token_ids"
      ? "(hash of the messages)"
      : (key === "id" || key === "tool_call_id") &&
          typeof value === "string" &&
          value.startsWith("call_")
        ? rename(value)
        : value,
  );
}
