// Node module hooks that load `.lua` files as their text, as the build does
// (tsup's `text` loader): for running the source under tsx, e.g.
// `node --import tsx --import ./scripts/lua-hooks.mjs examples/distributed/main.ts`.
import { register } from "node:module";

register(
  `data:text/javascript,${encodeURIComponent(`
import { readFile } from "node:fs/promises";
export async function load(url, context, next) {
  if (!url.startsWith("file:") || !url.endsWith(".lua")) return next(url, context);
  const text = await readFile(new URL(url), "utf8");
  return { format: "module", shortCircuit: true, source: "export default " + JSON.stringify(text) + ";" };
}`)}`,
);
