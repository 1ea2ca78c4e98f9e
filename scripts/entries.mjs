// The package's entry points, listed once. tsup.config.ts builds from this
// list, vitest and the scripts read it, and `node scripts/entries.mjs` checks
// the lists that cannot read it (package.json "exports", typedoc.json's
// entryPoints, tsconfig.json's paths) against it; with --write it rewrites
// them from it. A new entry point is one line below, then
// `node scripts/entries.mjs --write` and `npm run api:update`.
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * Each entry point: its subpath in package.json "exports", the source file
 * tsup builds it from (into dist/<name>.js, <name> being the subpath without
 * "./", or "index" for the root), and the optional peer packages it needs.
 */
export const ENTRIES = [
  { subpath: ".", source: "src/index.ts" },
  { subpath: "./wire", source: "src/wire/entry.ts" },
  { subpath: "./core", source: "src/recorder/entry.ts" },
  { subpath: "./errors", source: "src/errors.ts" },
  { subpath: "./report", source: "src/report/entry.ts" },
  { subpath: "./emulator", source: "src/emulator/index.ts" },
  {
    subpath: "./openai-agents",
    source: "src/integrations/openai-agents/index.ts",
    peers: ["@openai/agents"],
  },
  {
    subpath: "./ai-sdk",
    source: "src/integrations/ai-sdk/index.ts",
    peers: ["ai"],
  },
  {
    subpath: "./langchain",
    source: "src/integrations/langchain/index.ts",
    peers: ["@langchain/core"],
  },
  {
    subpath: "./bullmq",
    source: "src/integrations/bullmq/index.ts",
    peers: ["bullmq", "ioredis"],
  },
  { subpath: "./proxy", source: "src/proxy/index.ts" },
  { subpath: "./store", source: "src/store/entry.ts" },
  { subpath: "./replay", source: "src/replay/index.ts" },
  { subpath: "./openai-ft", source: "src/migrate/entry.ts" },
];

/** The command-line program, built on its own into dist/cli.js (package.json "bin"). */
export const CLI_ENTRY = { name: "cli", source: "src/cli/index.ts" };

/** The output name of an entry point: "index" for ".", else the subpath without "./". */
export const entryName = (subpath) => (subpath === "." ? "index" : subpath.slice(2));

/** The import specifier a user writes for an entry point. */
export const specifier = (subpath, pkgName = "trajectory-recorder") =>
  subpath === "." ? pkgName : `${pkgName}/${subpath.slice(2)}`;

/** tsup's `entry` option: output name to source file. */
export const tsupEntries = () =>
  Object.fromEntries(ENTRIES.map((e) => [entryName(e.subpath), e.source]));

/** Every source file the build treats as an entry (the CLI's included). */
export const entrySources = () => [...ENTRIES.map((e) => e.source), CLI_ENTRY.source];

const exportsTarget = (subpath) => {
  const name = entryName(subpath);
  return {
    import: { types: `./dist/${name}.d.ts`, default: `./dist/${name}.js` },
    require: { types: `./dist/${name}.d.cts`, default: `./dist/${name}.cjs` },
  };
};

/** The lists kept outside this file, each as it should read from ENTRIES. */
export function expectedLists(pkgName = "trajectory-recorder") {
  return {
    exports: {
      ...Object.fromEntries(ENTRIES.map((e) => [e.subpath, exportsTarget(e.subpath)])),
      "./package.json": "./package.json",
    },
    typedoc: ENTRIES.map((e) => e.source),
    paths: Object.fromEntries(
      ENTRIES.map((e) => [specifier(e.subpath, pkgName), [`./${e.source}`]]),
    ),
  };
}

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
const sorted = (list) => [...list].sort();
const readJson = (file) => JSON.parse(readFileSync(file, "utf8"));

/**
 * Where package.json "exports", typedoc.json's entryPoints and tsconfig.json's
 * paths differ from ENTRIES under `root`: one sentence per difference.
 */
export function entryListProblems(root) {
  const pkg = readJson(join(root, "package.json"));
  const want = expectedLists(pkg.name);
  const problems = [];
  if (!same(pkg.exports, want.exports))
    problems.push(
      `package.json "exports" differs from scripts/entries.mjs (it should list ${Object.keys(want.exports).join(", ")}, each with its dist/ files)`,
    );
  const typedoc = readJson(join(root, "typedoc.json")).entryPoints ?? [];
  if (!same(sorted(typedoc), sorted(want.typedoc)))
    problems.push(
      `typedoc.json "entryPoints" differs from scripts/entries.mjs: missing ${want.typedoc.filter((s) => !typedoc.includes(s)).join(", ") || "none"}, extra ${typedoc.filter((s) => !want.typedoc.includes(s)).join(", ") || "none"}`,
    );
  const paths = readJson(join(root, "tsconfig.json")).compilerOptions?.paths ?? {};
  if (!same(Object.entries(paths).sort(), Object.entries(want.paths).sort()))
    problems.push(`tsconfig.json "paths" differs from scripts/entries.mjs`);
  return problems;
}

function writeLists(root) {
  const write = (file, edit) => {
    const path = join(root, file);
    const json = readJson(path);
    edit(json);
    writeFileSync(path, `${JSON.stringify(json, null, 2)}\n`);
  };
  const pkgName = readJson(join(root, "package.json")).name;
  const want = expectedLists(pkgName);
  write("package.json", (pkg) => {
    pkg.exports = want.exports;
  });
  write("typedoc.json", (t) => {
    t.entryPoints = want.typedoc;
  });
  write("tsconfig.json", (t) => {
    t.compilerOptions.paths = want.paths;
  });
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
  if (process.argv.includes("--write")) writeLists(root);
  const problems = entryListProblems(root);
  for (const p of problems) console.error(p);
  if (problems.length > 0) {
    console.error("Run `node scripts/entries.mjs --write` to rewrite them from the list.");
    process.exit(1);
  }
  console.log(`entry points: ${ENTRIES.length} in scripts/entries.mjs, and the lists agree`);
}
