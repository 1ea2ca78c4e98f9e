// The import guards of `npm run lint`: reads every src/**/*.ts under a root
// (the repository by default) and fails on
//   - an import cycle (type imports count: a type cycle is a value cycle
//     waiting for its first value),
//   - an import running up the layers below,
//   - an import into another top-level folder's private files (only a
//     folder's index.ts is its way in; util/ is the shared kernel).
// Entry files (scripts/entries.mjs) are exempt from the last two: they gather
// what users reach from wherever it is declared, and src/index.ts and
// src/errors.ts take each name from its own module so that the root loads no
// more than it names.
// Each violation is printed as `file -> import`. Known violations may be held
// in <root>/scripts/import-baseline.json while they are being fixed: those are
// reported but do not fail; a baseline entry that no longer occurs is said, so
// the baseline can shrink.
//
// Usage: node scripts/check-imports.mjs [root] [--update-baseline]
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, posix, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { entrySources } from "./entries.mjs";

/**
 * The layers, lowest first. A file may import its own layer or a lower one.
 * A folder missing here is itself a violation: give it a layer.
 */
export const LAYERS = [
  ["util"],
  ["wire", "telemetry"],
  ["trajectory", "logprobs"],
  ["client"],
  ["training", "rewards", "recorder", "endpoint", "store"],
  ["shipper", "report", "proxy", "emulator", "replay", "migrate"],
  ["integrations"],
  ["demo"],
  ["cli"],
];

/** Folders whose files anyone may import directly. */
const SHARED_KERNEL = new Set(["util"]);

/**
 * Imports into another folder's private files that are allowed, each with its
 * reason. Keys are `file -> import`, both relative to src/.
 */
export const PRIVATE_EXCEPTIONS = {
  "cli/commands/proxy.ts -> integrations/bullmq/index.ts":
    "integrations/ has no index of its own: each integration is a subpath with its own peer, and its index.ts is its way in (loaded only for --store redis://)",
  // An entry reads
  //   "shipper/spool.ts -> trajectory/prepared.ts": "why the index cannot serve it",
  // and the list stays short: most private imports want an export in the
  // folder's index.ts instead.
};

const BASELINE = "scripts/import-baseline.json";

function listTs(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const path = join(dir, d.name);
    if (d.isDirectory()) return listTs(path);
    return d.name.endsWith(".ts") && !d.name.endsWith(".d.ts") ? [path] : [];
  });
}

const toPosix = (p) => p.split(sep).join("/");

/** The src/-relative file a relative specifier names, or undefined (not a .ts file of src/). */
function resolveSpecifier(from, spec, files) {
  if (!spec.startsWith(".")) return undefined;
  const base = posix.normalize(posix.join(posix.dirname(from), spec));
  const candidates = [
    base.replace(/\.(m|c)?js$/, ".$1ts").replace(/\.ts$/, ".ts"),
    `${base}.ts`,
    `${base}/index.ts`,
    base,
  ];
  return candidates.find((c) => files.has(c));
}

/** Every import of a file: static, type-only, `export ... from`, dynamic and `import("...")` types. */
function importsOf(text) {
  const info = ts.preProcessFile(text, true, true);
  return info.importedFiles.map((f) => f.fileName);
}

/** The import graph of root/src: src/-relative file -> the src/-relative files it imports. */
export function importGraph(root) {
  const src = join(root, "src");
  const paths = listTs(src);
  const files = new Set(paths.map((p) => toPosix(relative(src, p))));
  const graph = new Map();
  for (const path of paths) {
    const file = toPosix(relative(src, path));
    const targets = importsOf(readFileSync(path, "utf8"))
      .map((spec) => resolveSpecifier(file, spec, files))
      .filter((t) => t !== undefined && t !== file);
    graph.set(file, [...new Set(targets)].sort());
  }
  return graph;
}

/** The strongly connected components with more than one file (Tarjan). */
function cycles(graph) {
  let next = 0;
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const found = [];
  const visit = (v) => {
    index.set(v, next);
    low.set(v, next);
    next += 1;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
    }
    if (low.get(v) === index.get(v)) {
      const component = [];
      let w;
      do {
        w = stack.pop();
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return found;
}

const folderOf = (file) => (file.includes("/") ? file.slice(0, file.indexOf("/")) : "");
const layerOf = (folder) => LAYERS.findIndex((layer) => layer.includes(folder));

/**
 * The violations of the tree under root, by rule. Each is `file -> import`
 * (src/-relative); a cycle's are the imports that lie on it, and `cycles`
 * holds the files of each cycle.
 */
export function findViolations(root) {
  const graph = importGraph(root);
  const entries = new Set(entrySources().map((s) => s.replace(/^src\//, "")));
  entries.add("index.ts");
  entries.add("errors.ts");
  const components = cycles(graph);
  const componentOf = new Map();
  for (const [i, c] of components.entries()) for (const f of c) componentOf.set(f, i);
  const cycleEdges = [];
  const upward = [];
  const privates = [];
  const unlayered = new Set();
  for (const [file, targets] of graph) {
    const from = folderOf(file);
    if (from !== "" && layerOf(from) < 0) unlayered.add(from);
    for (const target of targets) {
      const edge = `${file} -> ${target}`;
      const c = componentOf.get(file);
      if (c !== undefined && c === componentOf.get(target)) cycleEdges.push(edge);
      const to = folderOf(target);
      if (from === to) continue;
      if (!entries.has(file)) {
        // A file at the top of src/ that is not an entry sits above every layer.
        const fromLayer = from === "" ? LAYERS.length : layerOf(from);
        const toLayer = to === "" ? LAYERS.length : layerOf(to);
        if (fromLayer >= 0 && toLayer >= 0 && toLayer > fromLayer) upward.push(edge);
      }
      const isWayIn = target === `${to}/index.ts`;
      const exempt = entries.has(file) || SHARED_KERNEL.has(to) || edge in PRIVATE_EXCEPTIONS;
      if (to !== "" && !isWayIn && !exempt) privates.push(edge);
    }
  }
  return {
    files: graph.size,
    cycles: components,
    cycle: cycleEdges.sort(),
    upward: upward.sort(),
    private: privates.sort(),
    unlayered: [...unlayered].sort(),
  };
}

const RULES = {
  cycle: "import on a cycle",
  upward: "import running up the layers",
  private: "import into another folder's private file",
};

/** Checks root against its baseline; returns the lines to print and whether it passed. */
export function check(root, { updateBaseline = false } = {}) {
  const found = findViolations(root);
  const baselinePath = join(root, BASELINE);
  const out = [];
  let ok = true;
  for (const folder of found.unlayered) {
    out.push(`src/${folder}/ has no layer: add it to LAYERS in scripts/check-imports.mjs`);
    ok = false;
  }
  if (updateBaseline) {
    const baseline = Object.fromEntries(Object.keys(RULES).map((r) => [r, found[r]]));
    writeFileSync(baselinePath, `${JSON.stringify(baseline, null, 2)}\n`);
    out.push(`wrote ${BASELINE}`);
  }
  const baseline = existsSync(baselinePath) ? JSON.parse(readFileSync(baselinePath, "utf8")) : {};
  for (const [rule, what] of Object.entries(RULES)) {
    const known = new Set(baseline[rule] ?? []);
    for (const edge of found[rule])
      if (!known.has(edge)) {
        out.push(`${what}: src/${edge.replace(" -> ", " -> src/")}`);
        ok = false;
      }
    for (const edge of known)
      if (!found[rule].includes(edge))
        out.push(`gone, remove it from ${BASELINE} (${rule}): ${edge}`);
  }
  for (const c of found.cycles) if (!ok) out.push(`cycle: ${c.join(", ")}`);
  const held = Object.keys(RULES).reduce(
    (n, r) => n + found[r].filter((e) => (baseline[r] ?? []).includes(e)).length,
    0,
  );
  out.push(
    `imports of ${found.files} files: ${found.cycles.length} cycles (${found.cycle.length} imports on them), ${found.upward.length} upward imports, ${found.private.length} private imports${held > 0 ? `; ${held} held by ${BASELINE}` : ""}`,
  );
  return { ok, lines: out, found };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const root = resolve(
    args.find((a) => !a.startsWith("--")) ?? join(dirname(fileURLToPath(import.meta.url)), ".."),
  );
  const { ok, lines } = check(root, { updateBaseline: args.includes("--update-baseline") });
  for (const line of lines) (ok ? console.log : console.error)(line);
  process.exit(ok ? 0 : 1);
}
