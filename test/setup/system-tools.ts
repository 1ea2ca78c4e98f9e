// The two programs some tests need besides node: `redis-server` (the
// distributed tests run BullMQ against a real one) and Chromium (the report's
// browser test). Found on the PATH (or named by REDIS_SERVER / CHROMIUM);
// where they are missing and this machine can get them (root, Debian's
// apt-get), the global setup installs them; where it cannot, vitest.config.ts
// leaves out the test files that need them and says so in one line.
import { execFileSync } from "node:child_process";
import { accessSync, constants } from "node:fs";
import path from "node:path";

/** Where the tools are, as the global setup hands them to the tests (`inject("systemTools")`). */
export interface SystemTools {
  redisServer?: string;
  chromium?: string;
}

declare module "vitest" {
  export interface ProvidedContext {
    systemTools: SystemTools;
  }
}

interface Tool {
  key: keyof SystemTools;
  /** Overrides the search: the path of the program. */
  env: string;
  names: string[];
  /** Debian's package. */
  pkg: string;
  /** The test files that need it (vitest globs). */
  files: string[];
}

export const TOOLS: Tool[] = [
  {
    key: "redisServer",
    env: "REDIS_SERVER",
    names: ["redis-server"],
    pkg: "redis-server",
    files: ["test/distributed/**"],
  },
  {
    key: "chromium",
    env: "CHROMIUM",
    names: ["chromium", "chromium-browser"],
    pkg: "chromium",
    files: ["test/report/chromium.test.ts", "test/examples/production-browser.test.ts"],
  },
];

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The first of `names` on the PATH. */
export function which(...names: string[]): string | undefined {
  const dirs = (process.env.PATH ?? "").split(path.delimiter).filter(Boolean);
  for (const name of names)
    for (const dir of dirs) {
      const file = path.join(dir, name);
      if (executable(file)) return file;
    }
  return undefined;
}

/** The tools found now. */
export function findTools(): SystemTools {
  const found: SystemTools = {};
  for (const tool of TOOLS) {
    const named = process.env[tool.env];
    const file = named ? (executable(named) ? named : undefined) : which(...tool.names);
    if (file) found[tool.key] = file;
  }
  return found;
}

/** The tools not found. */
export function missingTools(found: SystemTools = findTools()): Tool[] {
  return TOOLS.filter((t) => found[t.key] === undefined);
}

/** Why this machine cannot install the missing tools itself; undefined when it can. */
export function cannotInstall(): string | undefined {
  if (process.platform !== "linux") return `this is ${process.platform}, not Linux with apt-get`;
  if (!which("apt-get")) return "apt-get is not on the PATH";
  if (process.getuid?.() !== 0) return "installing packages needs root";
  return undefined;
}

/** The one line said when tests are left out, naming what is missing and how to get it. */
export function skipLine(missing: Tool[], why: string): string {
  const pkgs = missing.map((t) => t.pkg).join(" ");
  return `\n!!! SKIPPED: ${missing.map((t) => t.files.join(", ")).join(", ")}: ${missing
    .map((t) => t.names[0])
    .join(
      " and ",
    )} not found and not installed (${why}). Get them with \`sudo apt-get install -y ${pkgs}\` (Debian/Ubuntu; elsewhere your package manager, or set ${missing
    .map((t) => t.env)
    .join("/")} to the program), then run the tests again.\n`;
}

/**
 * Installs Debian's packages of the missing tools, under a lock so that
 * vitest runs started at once do not run apt-get side by side (the second
 * waits, then finds the tools installed). Says one line; apt-get's own
 * output is shown only when it fails.
 */
export function installMissing(missing: Tool[]): void {
  const pkgs = missing.map((t) => t.pkg);
  const lock = "/tmp/trajectory-recorder-test-apt.lock";
  // flock(1) holds the lock for the shell's lifetime and frees it however it ends.
  const script = [
    'missing=""',
    ...missing.map((t) => `command -v ${t.names[0]} >/dev/null || missing="$missing ${t.pkg}"`),
    '[ -z "$missing" ] && exit 0',
    "apt-get update -qq",
    "DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing",
  ].join("\n");
  console.log(
    `vitest global setup: installing ${pkgs.join(" and ")} with apt-get (needed by ${missing
      .map((t) => t.files.join(", "))
      .join(", ")}); this takes a minute, once.`,
  );
  const useFlock = which("flock") !== undefined;
  try {
    execFileSync(
      useFlock ? "flock" : "sh",
      useFlock ? [lock, "sh", "-c", script] : ["-c", script],
      { stdio: ["ignore", "pipe", "pipe"], maxBuffer: 64 * 1024 * 1024 },
    );
  } catch (error) {
    const e = error as { stdout?: Buffer; stderr?: Buffer; message: string };
    const out = `${e.stdout?.toString() ?? ""}${e.stderr?.toString() ?? ""}`.trim();
    throw new Error(
      `vitest global setup: \`apt-get install -y ${pkgs.join(" ")}\` failed (${e.message.split("\n")[0]}):\n${out.split("\n").slice(-20).join("\n")}`,
    );
  }
}
