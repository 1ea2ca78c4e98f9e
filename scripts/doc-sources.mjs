// The user documentation the checks read: the README and the guides in docs/,
// and the ```ts blocks in them (complete programs, and excerpts marked
// ```ts fragment).
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** README.md, then docs/*.md in name order, as paths relative to `root`. */
export function docSources(root) {
  return [
    "README.md",
    ...readdirSync(join(root, "docs"))
      .filter((f) => f.endsWith(".md"))
      .sort()
      .map((f) => `docs/${f}`),
  ];
}

/** Every ```ts block of those files: its code, file, first line, and whether it is a fragment. */
export function tsBlocks(root) {
  return docSources(root).flatMap((source) => {
    const text = readFileSync(join(root, source), "utf8");
    return [...text.matchAll(/^```ts( fragment)?\n([\s\S]*?)^```$/gm)].map((m) => ({
      code: m[2],
      source,
      fragment: Boolean(m[1]),
      line: text.slice(0, m.index).split("\n").length + 1,
    }));
  });
}
