// The import guards of `npm run lint` (scripts/check-imports.mjs), run on
// small trees written for each case: a clean tree passes, and each planted
// violation fails the run, named as `file -> import`.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";

const script = fileURLToPath(new URL("../../scripts/check-imports.mjs", import.meta.url));
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A tree of src/ files (path -> text) in a new directory. */
function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), "tr-imports-"));
  dirs.push(root);
  for (const [file, text] of Object.entries(files)) {
    const path = join(root, "src", file);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text);
  }
  return root;
}

function run(root: string): { code: number; out: string } {
  try {
    const out = execFileSync(process.execPath, [script, root], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
    });
    return { code: 0, out };
  } catch (e) {
    const err = e as { status: number; stdout: string; stderr: string };
    return { code: err.status, out: err.stdout + err.stderr };
  }
}

// util at the bottom, wire above it, client above both; each folder's way in is its index.ts.
const clean = {
  "util/index.ts": "export const id = <T>(x: T) => x;\n",
  "util/sleep.ts": "export const sleep = 1;\n",
  "wire/index.ts": 'export * from "./schema.js";\n',
  "wire/schema.ts": 'import { sleep } from "../util/sleep.js";\nexport const schema = sleep;\n',
  "client/index.ts": 'export { client } from "./client.js";\n',
  "client/client.ts":
    'import { schema } from "../wire/index.js";\nimport type { id } from "../util/index.js";\nexport const client = schema;\nexport type Id = typeof id;\n',
};

describe("the import guards", () => {
  it("pass on a tree that keeps every rule, and print the counts", () => {
    const { code, out } = run(tree(clean));
    expect(code).toBe(0);
    expect(out).toContain("0 cycles (0 imports on them), 0 upward imports, 0 private imports");
  });

  it("fail on a cycle made of type imports only", () => {
    const { code, out } = run(
      tree({
        ...clean,
        "wire/schema.ts": 'import type { Shape } from "./shape.js";\nexport const schema = 1;\n',
        "wire/shape.ts":
          'export type { schema } from "./schema.js";\nexport interface Shape { a: 1 }\n',
      }),
    );
    expect(code).toBe(1);
    expect(out).toContain("import on a cycle: src/wire/schema.ts -> src/wire/shape.ts");
    expect(out).toContain("import on a cycle: src/wire/shape.ts -> src/wire/schema.ts");
    expect(out).toMatch(/1 cycles \(2 imports on them\)/);
  });

  it("fail on an import running up the layers", () => {
    const { code, out } = run(
      tree({ ...clean, "wire/schema.ts": 'import { client } from "../client/index.js";\n' }),
    );
    expect(code).toBe(1);
    expect(out).toContain(
      "import running up the layers: src/wire/schema.ts -> src/client/index.ts",
    );
  });

  it("fail on an import into another folder's private file, but not into util's", () => {
    const { code, out } = run(
      tree({ ...clean, "client/client.ts": 'import { schema } from "../wire/schema.js";\n' }),
    );
    expect(code).toBe(1);
    expect(out).toContain(
      "import into another folder's private file: src/client/client.ts -> src/wire/schema.ts",
    );
    expect(out).not.toContain("util/sleep.ts");
  });

  it("fail on a folder the layers do not know", () => {
    const { code, out } = run(tree({ ...clean, "attic/index.ts": "export const a = 1;\n" }));
    expect(code).toBe(1);
    expect(out).toContain("src/attic/ has no layer");
  });

  it("exempt entry files from the layer and private rules", () => {
    const { code } = run(
      tree({
        ...clean,
        "index.ts": 'export { schema } from "./wire/schema.js";\n',
        "wire/entry.ts": 'export { client } from "../client/client.js";\n',
      }),
    );
    expect(code).toBe(0);
  });

  it("hold known violations in a baseline, fail on a new one, and say when one is gone", () => {
    const root = tree({
      ...clean,
      "client/client.ts": 'import { schema } from "../wire/schema.js";\n',
    });
    const baseline = (entries: string[]) => {
      mkdirSync(join(root, "scripts"), { recursive: true });
      writeFileSync(
        join(root, "scripts/import-baseline.json"),
        JSON.stringify({ private: entries }),
      );
    };
    baseline(["client/client.ts -> wire/schema.ts", "client/old.ts -> wire/schema.ts"]);
    const held = run(root);
    expect(held.code).toBe(0);
    expect(held.out).toContain("1 held by scripts/import-baseline.json");
    expect(held.out).toContain(
      "gone, remove it from scripts/import-baseline.json (private): client/old.ts",
    );
    writeFileSync(join(root, "src/util/sleep.ts"), 'import "../wire/schema.js";\n');
    const fresh = run(root);
    expect(fresh.code).toBe(1);
    expect(fresh.out).toContain("src/util/sleep.ts -> src/wire/schema.ts");
  });

  it("pass on this repository with its baseline", () => {
    const { code, out } = run(fileURLToPath(new URL("../..", import.meta.url)));
    expect(out).toMatch(/cycles .* upward imports, \d+ private imports/);
    expect(code).toBe(0);
  });
});
