// Runs a test fixture in a child process of its own (through tsx, from the
// repository's root) and reads what it reports: the last line it prints, as
// JSON. For what the test runner's process would blur: its own async hooks,
// its heap, a garbage collection the test must run itself.
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const root = fileURLToPath(new URL("../..", import.meta.url));

/** Options of {@link runFixture}. */
export interface FixtureOptions {
  /** Runs the child with `--expose-gc`, so that it can collect garbage itself. */
  exposeGc?: boolean;
}

/** Runs `path` (from the repository's root) with `args`; its last printed line, parsed. */
export async function runFixture<T>(
  path: string,
  args: string[] = [],
  options: FixtureOptions = {},
): Promise<T> {
  const env = options.exposeGc ? { ...process.env, NODE_OPTIONS: "--expose-gc" } : process.env;
  const { stdout } = await promisify(execFile)(`${root}node_modules/.bin/tsx`, [path, ...args], {
    cwd: root,
    env,
  });
  return JSON.parse(stdout.trim().split("\n").at(-1) ?? "") as T;
}
