// The Python `openai` and `anthropic` SDKs, for the tests that prove the
// recording endpoint against clients we did not write. Installed once into a cached virtual
// environment (python3 -m venv + pip, from the machine's package mirror),
// under a lock so that vitest runs started at once do not build it side by
// side. Where it cannot be had, vitest.config.ts leaves out the tests that
// need it and says so in one line.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import path from "node:path";
import { which } from "./system-tools.js";

/** The test files that run the Python SDK. */
export const PYTHON_FILES = [
  "test/proxy/python*.test.ts",
  "test/proxy/example*.test.ts",
  "test/distributed/proxy-*.test.ts",
];

/** Where the virtual environment lives (`TRAJECTORY_RECORDER_PYTHON_VENV` overrides). */
export function venvDir(): string {
  return (
    process.env.TRAJECTORY_RECORDER_PYTHON_VENV ??
    path.join(
      process.env.XDG_CACHE_HOME ?? path.join(homedir(), ".cache"),
      "trajectory-recorder",
      "python-openai",
    )
  );
}

/** The venv's python, when it is ready (with `openai`). */
export function venvPython(): string | undefined {
  const dir = venvDir();
  const python = path.join(dir, "bin", "python");
  return existsSync(path.join(dir, "ready")) && existsSync(python) ? python : undefined;
}

/** Whether the venv has the `anthropic` SDK too (added to a venv built before it was needed). */
export function venvHasAnthropic(): boolean {
  return venvPython() !== undefined && existsSync(path.join(venvDir(), "ready-anthropic"));
}

/** The package index pip should ask: the mirror named in pip's configuration, when there is one. */
function mirrorIndex(pip: string): string | undefined {
  try {
    const config = execFileSync(pip, ["config", "list"], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    });
    const line = config.split("\n").find((l) => /(^|\.)extra-index-url=|(^|\.)index-url=/.test(l));
    const value = line?.split("=").slice(1).join("=").replace(/^'|'$/g, "").trim();
    return value?.split(/\s+/)[0];
  } catch {
    return undefined;
  }
}

/**
 * The venv's python, building the venv first when it is missing. Returns
 * the reason instead when Python or the package cannot be had.
 */
export function ensurePythonOpenAI(): { python: string } | { why: string } {
  const ready = venvPython();
  if (ready && venvHasAnthropic()) return { python: ready };
  const python3 = process.env.PYTHON ?? which("python3");
  if (!python3) return { why: "python3 is not on the PATH" };
  const dir = venvDir();
  const pip = path.join(dir, "bin", "pip");
  const install = (pkgs: string) =>
    `if ! "${pip}" install -q --disable-pip-version-check ${"$INDEX"} ${pkgs}; then "${pip}" install -q --disable-pip-version-check ${pkgs}; fi`;
  // A venv built before `anthropic` was needed gets it added, not rebuilt
  // (other test runs may be using it).
  const script = [
    "set -e",
    `[ -f "${dir}/ready" ] && [ -f "${dir}/ready-anthropic" ] && exit 0`,
    `if [ ! -f "${dir}/ready" ]; then`,
    `rm -rf "${dir}"`,
    `"${python3}" -m venv "${dir}"`,
    install("openai anthropic"),
    `"${dir}/bin/python" -c "import openai"`,
    `touch "${dir}/ready"`,
    "fi",
    install("anthropic"),
    `"${dir}/bin/python" -c "import anthropic"`,
    `touch "${dir}/ready-anthropic"`,
  ].join("\n");
  console.log(
    `vitest setup: installing the Python openai and anthropic SDKs into ${dir} (once; used by ${PYTHON_FILES.join(", ")}).`,
  );
  try {
    execFileSync("mkdir", ["-p", path.dirname(dir)]);
    const lock = `${dir}.lock`;
    const useFlock = which("flock") !== undefined;
    // The mirror is read with the system pip (the venv's does not exist yet).
    const index = mirrorIndex(which("pip3") ?? which("pip") ?? "pip3");
    execFileSync(
      useFlock ? "flock" : "sh",
      useFlock ? [lock, "sh", "-c", script] : ["-c", script],
      {
        stdio: ["ignore", "pipe", "pipe"],
        env: { ...process.env, INDEX: index ? `--index-url ${index}` : "" },
        timeout: 300_000,
      },
    );
  } catch (error) {
    const e = error as { stderr?: Buffer; message: string };
    const tail = (e.stderr?.toString() ?? e.message).trim().split("\n").slice(-3).join(" / ");
    return { why: `pip could not install openai and anthropic into ${dir}: ${tail}` };
  }
  const python = venvPython();
  if (python && venvHasAnthropic()) return { python };
  return { why: `the venv in ${dir} was built but has no ready python with openai and anthropic` };
}

/** The one line said when the Python tests are left out. */
export function pythonSkipLine(why: string): string {
  return `\n!!! SKIPPED: ${PYTHON_FILES.join(", ")}: the Python openai and anthropic SDKs cannot be had (${why}). Install python3 (with venv and pip) and let pip reach a package index, or point TRAJECTORY_RECORDER_PYTHON_VENV at a venv with openai and anthropic installed (and files named ready and ready-anthropic in it), then run the tests again.\n`;
}

/** Whether this vitest run may run a Python test (no file filter, or one that matches). */
export function runNeedsPython(argv: string[] = process.argv.slice(2)): boolean {
  const filters = argv.filter(
    (a) => !a.startsWith("-") && a !== "run" && a !== "watch" && !/^\d+$/.test(a),
  );
  if (filters.length === 0) return true;
  return filters.some((f) => /proxy|python|example/.test(f));
}
