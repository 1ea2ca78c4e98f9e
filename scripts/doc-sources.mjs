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

/**
 * Every ```ts block of those files, indented (inside a list item) or not:
 * its code (without the fence's indent), file, first line, and whether it is
 * a fragment. A block ends at a closing fence of the same indent.
 */
export function tsBlocks(root) {
  return docSources(root).flatMap((source) => {
    const text = readFileSync(join(root, source), "utf8");
    return [...text.matchAll(/^( *)```ts( fragment)?\n([\s\S]*?)^\1```$/gm)].map((m) => ({
      code: dedent(m[3], m[1].length),
      source,
      fragment: Boolean(m[2]),
      line: text.slice(0, m.index).split("\n").length + 1,
    }));
  });
}

/** `code` with up to `n` leading spaces taken off each line. */
function dedent(code, n) {
  if (n === 0) return code;
  const indent = new RegExp(`^ {0,${n}}`, "gm");
  return code.replace(indent, "");
}
