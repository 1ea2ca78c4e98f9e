import { defineConfig } from "tsup";

const entry = {
  index: "src/index.ts",
  emulator: "src/emulator/index.ts",
  "openai-agents": "src/integrations/openai-agents/index.ts",
  "ai-sdk": "src/integrations/ai-sdk/index.ts",
  langchain: "src/integrations/langchain/index.ts",
  bullmq: "src/integrations/bullmq/index.ts",
};

export default defineConfig([
  {
    entry,
    format: ["esm"],
    dts: true,
    sourcemap: true,
    clean: true,
    target: "node20",
    splitting: true,
  },
  {
    entry,
    format: ["cjs"],
    dts: true,
    sourcemap: true,
    target: "node20",
    // p-queue ships ESM only; the CommonJS build carries its own copy so that
    // require() works on every supported Node version.
    noExternal: ["p-queue"],
  },
  {
    entry: { cli: "src/cli/index.ts" },
    format: ["esm"],
    sourcemap: true,
    target: "node20",
    banner: { js: "#!/usr/bin/env node" },
  },
]);
