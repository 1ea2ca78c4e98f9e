// The real `wandb` Python client (0.30.0, the version OpenPipe ART's
// `_train_sft` was checked with), for the test that drives the emulator's W&B
// API with it. Installed once into a virtual environment of its own under the
// user's cache directory (kept between runs, as CI caches ~/.cache), the way
// the global setup installs redis-server and Chromium; where Python cannot be
// had (no python3, or no venv module), vitest.config.ts leaves the test out
// and says so in one line.
//
// The package mirror this kind of machine reaches lacks some of wandb's
// dependencies (sentry-sdk, opentelemetry-semantic-conventions), so wandb is
// installed without its dependency resolution, with the ones it imports named,
// and `opentelemetry.semconv` (of which wandb reads only attribute-name
// constants) is a small module of ours (see SEMCONV_STUB).
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import path from "node:path";
import { which } from "./system-tools.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** The venv's python, with wandb 0.30.0 importable; undefined where it cannot be had. */
    wandbPython: string | undefined;
  }
}

export const WANDB_VERSION = "0.30.0";
/** The test file that needs it (vitest glob). */
export const WANDB_TEST_FILES = ["test/emulator/wandb-python-client.test.ts"];

// wandb imports these (its own metadata lists more, which it never imports here).
const NO_DEPS = [
  `wandb==${WANDB_VERSION}`,
  "click",
  "packaging",
  "platformdirs",
  "protobuf",
  "pyyaml",
  "requests",
  "urllib3",
  "charset-normalizer",
  "idna",
  "certifi",
  "xxhash",
  "typing-extensions",
  "opentelemetry-api",
  "opentelemetry-sdk",
  "opentelemetry-proto",
  "opentelemetry-exporter-otlp-proto-http",
  "opentelemetry-exporter-otlp-proto-common",
];
const WITH_DEPS = ["pydantic==2.13.5"];

/**
 * Stands in for opentelemetry-semantic-conventions: every submodule imports,
 * and every attribute is a string (that answers attributes the same way).
 */
const SEMCONV_STUB = `# Written by trajectory-recorder's test setup: a stand-in for
# opentelemetry-semantic-conventions, which the package mirror lacks. wandb
# reads only attribute-name constants from it.
import importlib.abc
import importlib.util
import sys
import types


class _Name(str):
    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return _Name(f"{self}.{attr.lower()}")


def _module_getattr(attr):
    if attr.startswith("__"):
        raise AttributeError(attr)
    return _Name(attr.lower())


class _Submodules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path, target=None):
        if fullname.startswith(__name__ + "."):
            return importlib.util.spec_from_loader(fullname, self, is_package=True)
        return None

    def create_module(self, spec):
        module = types.ModuleType(spec.name)
        module.__path__ = []
        module.__getattr__ = _module_getattr
        return module

    def exec_module(self, module):
        pass


sys.meta_path.insert(0, _Submodules())
__getattr__ = _module_getattr
`;

/** Why Python cannot be had here; undefined when it can. */
export function pythonMissing(): string | undefined {
  const python = process.env.PYTHON ?? which("python3");
  if (!python) return "python3 is not on the PATH (or set PYTHON)";
  const r = spawnSync(python, ["-c", "import venv, ensurepip"], { stdio: "ignore" });
  if (r.status !== 0)
    return `${python} has no venv/ensurepip module (Debian: apt-get install python3-venv)`;
  return undefined;
}

/** The one line said when the test is left out. */
export function pythonSkipLine(why: string): string {
  return `\n!!! SKIPPED: ${WANDB_TEST_FILES.join(", ")}: the real wandb ${WANDB_VERSION} Python client cannot be had (${why}). Install python3 with its venv module, then run the tests again.\n`;
}

function cacheRoot(): string {
  const base = process.env.XDG_CACHE_HOME || path.join(homedir(), ".cache");
  return path.join(base, "trajectory-recorder-tests");
}

/**
 * pip's index settings with the first of its extra indexes as the index: the
 * default index pip also names may be out of reach, and each miss there costs
 * retries. Nothing when PIP_INDEX_URL is set or pip names no extra index.
 */
function indexArgs(python: string): string[] {
  if (process.env.PIP_INDEX_URL) return [];
  const r = spawnSync(python, ["-m", "pip", "config", "list"], { encoding: "utf8" });
  const extra = /^global\.extra-index-url='([^']*)'/m.exec(r.stdout ?? "")?.[1] ?? "";
  const urls = extra.split(/\s+/).filter(Boolean);
  if (urls.length === 0) return [];
  return [
    "--index-url",
    urls[0] as string,
    ...urls.slice(1).flatMap((u) => ["--extra-index-url", u]),
  ];
}

/**
 * The venv's python with wandb importable: found in the cache, or installed
 * there now (under a lock, so runs started at once do not install side by
 * side). Throws, with pip's last lines, when the install fails.
 */
export function ensureWandbPython(): string {
  const python = process.env.PYTHON ?? (which("python3") as string);
  const version = execFileSync(
    python,
    ["-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
    {
      encoding: "utf8",
    },
  ).trim();
  const dir = path.join(cacheRoot(), `wandb-${WANDB_VERSION}-py${version}`);
  const venvPython = path.join(dir, "bin", "python");
  const ready = path.join(dir, ".ready");
  if (existsSync(ready)) return venvPython;
  mkdirSync(cacheRoot(), { recursive: true });
  console.log(
    `vitest global setup: installing wandb ${WANDB_VERSION} into ${dir} (needed by ${WANDB_TEST_FILES.join(", ")}); this takes a few seconds, once.`,
  );
  const pip = path.join(dir, "bin", "pip");
  const stub = path.join(cacheRoot(), "opentelemetry-semconv-stub.py");
  const q = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;
  const index = indexArgs(python).map(q).join(" ");
  const script = [
    "set -e",
    // Another run may have finished it while this one waited for the lock.
    `[ -f ${q(ready)} ] && exit 0`,
    `rm -rf ${q(dir)}`,
    `${q(python)} -m venv ${q(dir)}`,
    `${q(pip)} install -q ${index} ${WITH_DEPS.join(" ")}`,
    `${q(pip)} install -q --no-deps ${index} ${NO_DEPS.join(" ")}`,
    `SITE="$(${q(venvPython)} -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"`,
    `mkdir -p "$SITE/opentelemetry/semconv"`,
    `cp ${q(stub)} "$SITE/opentelemetry/semconv/__init__.py"`,
    `${q(venvPython)} -c 'import wandb; assert wandb.__version__ == "${WANDB_VERSION}", wandb.__version__'`,
    `touch ${q(ready)}`,
  ].join("\n");
  writeFileSync(stub, SEMCONV_STUB);
  const lock = path.join(cacheRoot(), `wandb-${WANDB_VERSION}.lock`);
  const useFlock = which("flock") !== undefined;
  try {
    execFileSync(
      useFlock ? "flock" : "sh",
      useFlock ? [lock, "sh", "-c", script] : ["-c", script],
      { stdio: ["ignore", "pipe", "pipe"], maxBuffer: 64 * 1024 * 1024, timeout: 600_000 },
    );
  } catch (error) {
    const e = error as { stdout?: Buffer; stderr?: Buffer; message: string };
    const out = `${e.stdout?.toString() ?? ""}${e.stderr?.toString() ?? ""}`.trim();
    throw new Error(
      `vitest global setup: installing wandb ${WANDB_VERSION} into ${dir} failed (${e.message.split("\n")[0]}):\n${out.split("\n").slice(-20).join("\n")}`,
    );
  }
  return venvPython;
}
