// Checks the relative links of README.md and docs/*.md: each must name a file
// of the repository, and its #anchor (if any) a heading of that file, so a
// renamed guide or section cannot leave a dead link behind. Web links are not
// fetched (CI runs offline). The README's guides table must list every guide
// of docs/ (when it has one: <!-- section:guides -->).
//
// Usage: node scripts/check-links.mjs [repository root]
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { docSources } from "./doc-sources.mjs";

const root = resolve(process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), ".."));
const sources = docSources(root);

// GitHub's anchor for a heading: lower case, punctuation dropped, spaces to
// dashes; repeated headings get -1, -2, ...
function anchors(markdown) {
  const seen = new Map();
  const out = new Set();
  for (const line of withoutCode(markdown).split("\n")) {
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const text = m[1].replace(/`/g, "").replace(/\[([^\]]*)\]\([^)]*\)/g, "$1");
    const base = text
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/\s/g, "-");
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

// Code blocks and inline code hold no links.
function withoutCode(markdown) {
  return markdown.replace(/^```[\s\S]*?^```$/gm, "").replace(/`[^`\n]*`/g, "");
}

const problems = [];
let checked = 0;
for (const source of sources) {
  const text = readFileSync(join(root, source), "utf8");
  const body = withoutCode(text);
  const links = [
    ...[...body.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1]),
    ...[...body.matchAll(/^\[[^\]]+\]:\s*(\S+)/gm)].map((m) => m[1]),
    ...[...body.matchAll(/<a\s[^>]*href="([^"]+)"/g)].map((m) => m[1]),
  ];
  for (const link of links) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue; // https:, mailto:, ...
    checked++;
    const [path, anchor] = link.split("#", 2);
    const target = path === "" ? join(root, source) : resolve(dirname(join(root, source)), path);
    const where = `${source}: ${link}`;
    if (!target.startsWith(root) || !existsSync(target)) {
      problems.push(`${where}: no such file ${relative(root, target)}`);
      continue;
    }
    if (anchor && statSync(target).isFile() && target.endsWith(".md")) {
      if (!anchors(readFileSync(target, "utf8")).has(decodeURIComponent(anchor)))
        problems.push(`${where}: ${relative(root, target)} has no heading #${anchor}`);
    }
  }
}
// The README's guides table lists every guide of docs/.
const readme = readFileSync(join(root, "README.md"), "utf8");
const guides = /<!-- section:guides -->([\s\S]*?)<!-- \/section:guides -->/.exec(readme)?.[1];
for (const source of guides === undefined ? [] : sources)
  if (/^docs\/[^/]+\.md$/.test(source) && !guides.includes(`](${source})`))
    problems.push(`README.md: the guides table does not list ${source}`);
for (const p of problems) console.error(p);
if (problems.length > 0) {
  console.error(`links: ${problems.length} broken relative link(s) in README.md and docs/*.md`);
  process.exit(1);
}
console.log(`links: ${checked} relative links of ${sources.length} files resolve`);
