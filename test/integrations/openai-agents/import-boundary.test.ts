import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const src = fileURLToPath(new URL("../../../src/", import.meta.url));

/** Every source file the root entry point reaches through relative imports. */
function reachable(entry: string): Map<string, string> {
  const seen = new Map<string, string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    const text = readFileSync(file, "utf8");
    seen.set(file, text);
    for (const m of text.matchAll(/(?:from|import)\s*\(?\s*"(\.{1,2}\/[^"]+)"/g)) {
      // Data (package.json, for the version) holds names, not code that loads them.
      if ((m[1] as string).endsWith(".json")) continue;
      visit(path.resolve(path.dirname(file), (m[1] as string).replace(/\.js$/, ".ts")));
    }
  };
  visit(entry);
  return seen;
}

describe("the package root", () => {
  it("never loads the OpenAI Agents SDK (only trajectory-recorder/openai-agents does)", () => {
    const files = reachable(path.join(src, "index.ts"));
    expect(files.size).toBeGreaterThan(10);
    for (const [file, text] of files) {
      expect(file).not.toContain(`${path.sep}integrations${path.sep}`);
      expect(text, file).not.toMatch(/["']@openai\/agents/);
    }
  });
});
