import { defineConfig } from "tsup";
import { CLI_ENTRY, tsupEntries } from "./scripts/entries.mjs";

// Source maps without the sources in them: stack traces run with
// --enable-source-maps still name src/ files and lines, at a fraction of the
// size (the maps were 1.6 MB of 2.7 MB with sourcesContent).
// No keepNames: it wraps every function and closure in a name-setting call,
// about a microsecond each for the closures the recorder makes per call. The
// classes the bundler renames (`_InvalidArgumentError`, where a class refers
// to itself) set their written name themselves (src/util/class-name.ts); the
// smoke test checks every exported class's name.
const withoutSources = {
  esbuildOptions(options: { sourcesContent?: boolean }) {
    options.sourcesContent = false;
  },
  // The BullMQ integration's Redis scripts (src/integrations/bullmq/lua/),
  // inlined as text into the ESM and CommonJS builds.
  loader: { ".lua": "text" } as const,
};

const entry = tsupEntries();

export default defineConfig([
  {
    entry,
    format: ["esm"],
    dts: true,
    sourcemap: true,
    ...withoutSources,
    clean: true,
    target: "node20",
    splitting: true,
  },
  {
    entry,
    format: ["cjs"],
    dts: true,
    sourcemap: true,
    ...withoutSources,
    target: "node20",
    // p-queue ships ESM only; the CommonJS build carries its own copy so that
    // require() works on every supported Node version.
    noExternal: ["p-queue"],
  },
  {
    entry: { [CLI_ENTRY.name]: CLI_ENTRY.source },
    format: ["esm"],
    sourcemap: true,
    ...withoutSources,
    target: "node20",
    banner: { js: "#!/usr/bin/env node" },
  },
]);
