import { defineConfig } from "tsup";

// Source maps without the sources in them: stack traces run with
// --enable-source-maps still name src/ files and lines, at a fraction of the
// size (the maps were 1.6 MB of 2.7 MB with sourcesContent).
const withoutSources = {
  esbuildOptions(options: { sourcesContent?: boolean }) {
    options.sourcesContent = false;
  },
  // The BullMQ integration's Redis scripts (src/integrations/bullmq/lua/),
  // inlined as text into the ESM and CommonJS builds.
  loader: { ".lua": "text" } as const,
};

const entry = {
  index: "src/index.ts",
  wire: "src/wire/entry.ts",
  core: "src/recorder/entry.ts",
  errors: "src/errors.ts",
  report: "src/report/entry.ts",
  emulator: "src/emulator/index.ts",
  "openai-agents": "src/integrations/openai-agents/index.ts",
  "ai-sdk": "src/integrations/ai-sdk/index.ts",
  langchain: "src/integrations/langchain/index.ts",
  bullmq: "src/integrations/bullmq/index.ts",
  proxy: "src/proxy/index.ts",
};

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
    entry: { cli: "src/cli/index.ts" },
    format: ["esm"],
    sourcemap: true,
    ...withoutSources,
    target: "node20",
    banner: { js: "#!/usr/bin/env node" },
  },
]);
