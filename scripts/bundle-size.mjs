// What a bundler pulls in for one import from the built package: each case is
// a one-line program bundled and minified by esbuild (the one tsup uses), with
// the peer dependencies left external (the user's app has them anyway) and
// the package's own dependencies (zod, p-queue) bundled.
//
// Usage: node scripts/bundle-size.mjs [repo root] (after `npm run build`).
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";

const here = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const root = resolve(process.argv[2] ?? here);
const peers = Object.keys(
  JSON.parse(
    await import("node:fs").then((fs) => fs.readFileSync(join(root, "package.json"), "utf8")),
  ).peerDependencies ?? {},
);
const cases = [
  ['import { Recorder } from "trajectory-recorder";', "Recorder"],
  ['import * as all from "trajectory-recorder";', "all"],
];
const dir = mkdtempSync(join(tmpdir(), "tr-bundle-size-"));
// The package as a user's bundler finds it: in node_modules, resolved through
// its exports map ("import" condition).
mkdirSync(join(dir, "node_modules"));
symlinkSync(root, join(dir, "node_modules/trajectory-recorder"));
try {
  for (const [line, name] of cases) {
    const entry = join(dir, `${name}.mjs`);
    writeFileSync(entry, `${line}\nconsole.log(${name});\n`);
    const result = await build({
      entryPoints: [entry],
      bundle: true,
      minify: true,
      platform: "node",
      format: "esm",
      target: "node20",
      write: false,
      metafile: true,
      external: [...peers, ...peers.map((p) => `${p}/*`)],
      logLevel: "error",
    });
    const code = result.outputFiles[0].contents;
    const inputs = Object.entries(result.metafile.outputs).flatMap(([, o]) =>
      Object.entries(o.inputs),
    );
    const by = (test) =>
      inputs.filter(([p]) => test(p)).reduce((n, [, i]) => n + i.bytesInOutput, 0);
    const own = by((p) => !p.includes("node_modules"));
    const zod = by((p) => p.includes("node_modules/zod"));
    console.log(
      `${line.padEnd(46)} ${String(code.length).padStart(8)} B minified, ${String(gzipSync(code).length).padStart(7)} B gzip (package ${own} B, zod ${zod} B, other deps ${code.length - own - zod} B)`,
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
