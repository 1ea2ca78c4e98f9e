// The documentation's code is run and type-checked by scripts/readme-run.mjs
// and scripts/readme-types.mjs: every ```ts block of README.md and docs/*.md,
// at the top level or indented inside a list item, must reach them.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
// @ts-expect-error: a plain .mjs script without declarations.
import { docSources, tsBlocks } from "../../scripts/doc-sources.mjs";

const root = path.resolve(import.meta.dirname, "../..");

type Block = { code: string; source: string; fragment: boolean; line: number };

/** Every fence that opens TypeScript, found line by line (what a reader sees as code). */
function tsFences(dir: string): { at: string; fragment: boolean }[] {
  return (docSources(dir) as string[]).flatMap((source) =>
    readFileSync(path.join(dir, source), "utf8")
      .split("\n")
      .flatMap((text, i) => {
        const m = /^\s*```(ts|tsx|typescript|js|javascript|mts)\b(.*)$/.exec(text);
        return m ? [{ at: `${source}:${i + 2}`, fragment: /\bfragment\b/.test(m[2] ?? "") }] : [];
      }),
  );
}

const list = (script: string) =>
  execFileSync(process.execPath, [path.join(root, "scripts", script), "--list"], {
    encoding: "utf8",
  })
    .split("\n")
    .filter(Boolean);

describe("the documentation's code blocks", () => {
  it("finds blocks indented in a list item as well as top-level ones, and ends each at its own fence", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "doc-blocks-"));
    mkdirSync(path.join(dir, "docs"));
    writeFileSync(
      path.join(dir, "README.md"),
      [
        "# t",
        "```ts",
        'console.log("top");',
        "```",
        "- a step:",
        "",
        "  ```ts",
        '  const x = "  indented";',
        "  if (x) {",
        "    console.log(x);",
        "  }",
        "  ```",
        "```bash",
        "npm test",
        "```",
      ].join("\n"),
    );
    writeFileSync(
      path.join(dir, "docs", "guide.md"),
      ["   ```ts fragment", "   use(thing);", "   ```", ""].join("\n"),
    );
    const blocks = tsBlocks(dir) as Block[];
    expect(blocks.map(({ source, line, fragment }) => ({ source, line, fragment }))).toEqual([
      { source: "README.md", line: 3, fragment: false },
      { source: "README.md", line: 8, fragment: false },
      { source: "docs/guide.md", line: 2, fragment: true },
    ]);
    expect(blocks[1]?.code).toBe('const x = "  indented";\nif (x) {\n  console.log(x);\n}\n');
    expect(blocks[2]?.code).toBe("use(thing);\n");
  });

  it("reach readme-run (the complete ones) and readme-types (all of them) in this repository", () => {
    const fences = tsFences(root);
    const blocks = (tsBlocks(root) as Block[]).map((b) => `${b.source}:${b.line}`);
    // No TypeScript fence escapes the block finder, indented or not.
    expect(blocks).toEqual(fences.map((f) => f.at));
    expect(fences.some((f) => /^docs\//.test(f.at))).toBe(true);
    expect(list("readme-types.mjs")).toEqual(blocks);
    expect(list("readme-run.mjs")).toEqual(fences.filter((f) => !f.fragment).map((f) => f.at));
    // The README's rewards block is a complete program (run offline against the emulator).
    const rewards = (tsBlocks(root) as Block[]).find(
      (b) => b.source === "README.md" && b.code.includes("rankRewards("),
    );
    expect(rewards?.fragment).toBe(false);
  });
});
