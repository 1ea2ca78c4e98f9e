import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

// The test matrix: OPENAI_MAJOR=7 points every `import "openai"` of the source
// and the tests at the newest 7.x (installed under the alias `openai7`).
const openaiMajor = process.env.OPENAI_MAJOR ?? "6";
const nodeMajor = Number(process.versions.node.split(".")[0]);
const src = (file: string) => fileURLToPath(new URL(`./src/${file}`, import.meta.url));
const alias = [
  // Tests and examples import the package by its public name, served from source.
  { find: /^trajectory-recorder$/, replacement: src("index.ts") },
  { find: /^trajectory-recorder\/emulator$/, replacement: src("emulator/index.ts") },
  {
    find: /^trajectory-recorder\/(openai-agents|ai-sdk|langchain)$/,
    replacement: src("integrations/$1/index.ts"),
  },
  ...(openaiMajor === "7" ? [{ find: /^openai(\/.*)?$/, replacement: "openai7$1" }] : []),
];

// The framework packages (@openai/agents, ai, @mastra/core) need Node 22, so
// their tests belong to the Node 22 leg of the matrix.
const exclude = ["node_modules/**", "dist/**"];
if (nodeMajor < 22) exclude.push("test/integrations/**");

export default defineConfig({
  resolve: { alias },
  test: {
    include: ["test/**/*.test.ts"],
    exclude,
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
  },
});
