// The guards of the public API, run on small fixture packages: the API report
// check (scripts/api-report.mjs) and the guides' link check
// (scripts/check-links.mjs).
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";

const run = promisify(execFile);
const repo = fileURLToPath(new URL("..", import.meta.url));
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function fixture(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "tr-api-tooling-"));
  dirs.push(dir);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, ".."), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

async function script(name: string, args: string[]) {
  try {
    const { stdout, stderr } = await run(process.execPath, [join(repo, "scripts", name), ...args]);
    return { code: 0, out: stdout + stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, out: e.stdout + e.stderr };
  }
}

const pkg = JSON.stringify({
  name: "fixture-pkg",
  version: "1.0.0",
  exports: { ".": { import: { types: "./dist/index.d.ts", default: "./dist/index.js" } } },
});
const documented = `/** Adds two numbers. */
export declare function add(a: number, b: number): number;
`;

describe("npm run api:check / api:update", () => {
  function apiFixture(dts: string) {
    const dir = fixture({ "package.json": pkg, "dist/index.d.ts": dts });
    symlinkSync(join(repo, "node_modules"), join(dir, "node_modules"));
    return dir;
  }

  it("writes the report with --update, then passes while the API is unchanged", async () => {
    const dir = apiFixture(documented);
    expect((await script("api-report.mjs", ["--root", dir])).out).toContain(
      "api/fixture-pkg.api.md is missing",
    );
    const updated = await script("api-report.mjs", ["--root", dir, "--update"]);
    expect(updated.code).toBe(0);
    expect(readFileSync(join(dir, "api/fixture-pkg.api.md"), "utf8")).toContain(
      "export function add(a: number, b: number): number;",
    );
    const checked = await script("api-report.mjs", ["--root", dir]);
    expect(checked).toMatchObject({ code: 0 });
    expect(checked.out).toContain("fixture-pkg: matches api/fixture-pkg.api.md");
  }, 240_000);

  it("fails on a changed export, showing the difference", async () => {
    const dir = apiFixture(documented);
    await script("api-report.mjs", ["--root", dir, "--update"]);
    writeFileSync(
      join(dir, "dist/index.d.ts"),
      `${documented}/** Subtracts. */\nexport declare function sub(a: number, b: number): number;\n`,
    );
    const checked = await script("api-report.mjs", ["--root", dir]);
    expect(checked.code).toBe(1);
    expect(checked.out).toContain("+export function sub(a: number, b: number): number;");
    expect(checked.out).toContain("the built API differs from api/fixture-pkg.api.md");
  }, 240_000);

  it("fails on an export without a doc comment, naming it; an undocumented member only marks the report", async () => {
    const dir = apiFixture(`${documented}export declare function bare(): void;\n`);
    const updated = await script("api-report.mjs", ["--root", dir, "--update"]);
    expect(updated.code).toBe(1);
    expect(updated.out).toMatch(/dist\/index\.d\.ts:3:1 - \(ae-undocumented\) .*"bare"/);

    const members = apiFixture(
      `/** Options of add. */\nexport interface AddOptions {\n  round: boolean;\n}\n${documented}`,
    );
    expect((await script("api-report.mjs", ["--root", members, "--update"])).code).toBe(0);
    expect(readFileSync(join(members, "api/fixture-pkg.api.md"), "utf8")).toMatch(
      /\/\/ \(undocumented\)\n\s+round: boolean;/,
    );
  }, 240_000);
});

describe("the root's bounds in api:check", () => {
  function rootFixture(dts: string, js = "") {
    const dir = fixture({ "package.json": pkg, "dist/index.d.ts": dts, "dist/index.js": js });
    symlinkSync(join(repo, "node_modules"), join(dir, "node_modules"));
    return dir;
  }
  const consts = (n: number) => ({
    dts: Array.from(
      { length: n },
      (_, i) => `/** Value ${i}. */\nexport declare const v${i}: number;\n`,
    ).join(""),
    js: Array.from({ length: n }, (_, i) => `export const v${i} = ${i};\n`).join(""),
  });

  it("fails on a type the root uses without exporting it, naming it", async () => {
    const dir = rootFixture(
      `import type { Hidden } from "./hidden.js";\n/** Returns a type of another file. */\nexport declare function f(): Hidden;\n`,
    );
    writeFileSync(
      join(dir, "dist/hidden.d.ts"),
      "/** Not exported by the entry point. */\nexport interface Hidden {\n  a: number;\n}\n",
    );
    const r = await script("api-report.mjs", ["--root", dir, "--update"]);
    expect(r.code).toBe(1);
    expect(r.out).toContain('fixture-pkg uses the type "Hidden" without exporting it');
  }, 240_000);

  it("takes 40 values, and fails on 41 as the built module has them", async () => {
    const forty = consts(40);
    const ok = await script("api-report.mjs", [
      "--root",
      rootFixture(forty.dts, forty.js),
      "--update",
    ]);
    expect(ok).toMatchObject({ code: 0 });
    const more = consts(41);
    const r = await script("api-report.mjs", [
      "--root",
      rootFixture(more.dts, more.js),
      "--update",
    ]);
    expect(r.code).toBe(1);
    expect(r.out).toContain("fixture-pkg exports 41 values, more than 40");
  }, 240_000);

  it("fails on more than 100 names, types included", async () => {
    const types = Array.from(
      { length: 101 },
      (_, i) => `/** Type ${i}. */\nexport type T${i} = number;\n`,
    );
    const r = await script("api-report.mjs", ["--root", rootFixture(types.join("")), "--update"]);
    expect(r.code).toBe(1);
    expect(r.out).toContain("fixture-pkg exports 101 names, more than 100");
    expect(r.out).not.toContain("values, more than");
  }, 240_000);
});

describe("a type declared low and re-listed in its owner's namespace", () => {
  // As tsup bundles it: the shape lives in the wire entry's file, the root's
  // class re-lists it in its namespace.
  const twoEntries = JSON.stringify({
    name: "fixture-pkg",
    version: "1.0.0",
    exports: {
      ".": { import: { types: "./dist/index.d.ts" } },
      "./wire": { import: { types: "./dist/wire.d.ts" } },
    },
  });
  const shape =
    "/** A shape as it travels. */\ninterface ShapeWire {\n  /** Its size. */\n  size: number;\n}\n";
  const owner = `import { ShapeWire } from "./wire.js";
/** The class that owns the shape. */
declare class Shape {
  /** Its JSON. */
  toJSON(): Shape.ShapeWire;
}
/** The shape's types, re-listed. */
declare namespace Shape {
  export type { ShapeWire };
}
export { Shape };
`;
  function relistFixture(wire: string) {
    const dir = fixture({
      "package.json": twoEntries,
      "dist/index.d.ts": owner,
      "dist/wire.d.ts": wire,
    });
    symlinkSync(join(repo, "node_modules"), join(dir, "node_modules"));
    return dir;
  }

  it("passes when another entry point's report declares the re-listed type", async () => {
    const dir = relistFixture(`${shape}export type { ShapeWire };\n`);
    const r = await script("api-report.mjs", ["--root", dir, "--update"]);
    expect(r).toMatchObject({ code: 0 });
    expect(readFileSync(join(dir, "api/fixture-pkg.api.md"), "utf8")).toMatch(
      /export namespace Shape \{\n\s+(export )+type \{ ShapeWire \};/,
    );
    expect(readFileSync(join(dir, "api/fixture-pkg-wire.api.md"), "utf8")).toContain(
      "export interface ShapeWire {",
    );
    expect(await script("api-report.mjs", ["--root", dir])).toMatchObject({ code: 0 });
  }, 240_000);

  it("fails when no report declares it, for its shape would show in no diff", async () => {
    const dir = relistFixture(
      `${shape}/** Something else. */\nexport declare const other: number;\nexport type { ShapeWire as Hidden };\n`,
    );
    const r = await script("api-report.mjs", ["--root", dir, "--update"]);
    expect(r.code).toBe(1);
    expect(r.out).toContain(
      'fixture-pkg re-lists "ShapeWire" in a namespace, but no entry point\'s report declares it',
    );
  }, 240_000);
});

describe("the guides' link check", () => {
  it("passes when every relative link and anchor resolves", async () => {
    const dir = fixture({
      "README.md":
        "# Title\n\nSee [the guide](docs/guide.md#two-words) and [web](https://example.com).\n",
      "docs/guide.md": "# Guide\n\n## Two words\n\nBack to [the README](../README.md).\n",
    });
    const r = await script("check-links.mjs", [dir]);
    expect(r).toMatchObject({ code: 0 });
    expect(r.out).toContain("links: 2 relative links of 2 files resolve");
  });

  it("names a link to a missing file or heading; links inside code are not links", async () => {
    const dir = fixture({
      "README.md":
        "# Title\n\n[gone](docs/gone.md), [anchor](docs/guide.md#nowhere)\n\n```md\n[in code](nothing.md)\n```\n",
      "docs/guide.md": "# Guide\n",
    });
    const r = await script("check-links.mjs", [dir]);
    expect(r.code).toBe(1);
    expect(r.out).toContain("README.md: docs/gone.md: no such file docs/gone.md");
    expect(r.out).toContain(
      "README.md: docs/guide.md#nowhere: docs/guide.md has no heading #nowhere",
    );
    expect(r.out).not.toContain("nothing.md");
  });
});
