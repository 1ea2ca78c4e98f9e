import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

// The test matrix: OPENAI_MAJOR points every `import "openai"` of the source
// and the tests at another major: 7 at the devDependency alias `openai7`; 4
// and 5 at the newest 4.x and 5.x, which `.ci/run` installs into
// `.ci/openai-legacy` (as devDependencies their peer range for zod, ^3, would
// conflict with the zod 4 the framework packages want).
const openaiMajor = process.env.OPENAI_MAJOR ?? "6";
const legacy = (major: string) => {
  if (major !== "4" && major !== "5")
    throw new Error(
      `OPENAI_MAJOR must be 4, 5, 6 or 7 (the majors the package supports), not ${major}.`,
    );
  const dir = fileURLToPath(
    new URL(`./.ci/openai-legacy/node_modules/openai${major}`, import.meta.url),
  );
  if (!existsSync(dir))
    throw new Error(
      `OPENAI_MAJOR=${major} needs openai ${major}.x in ${dir}: run \`bash .ci/run\`, or install it with \`npm install --prefix .ci/openai-legacy --no-save openai${major}@npm:openai@${major}\`.`,
    );
  return dir;
};
const openaiTarget =
  openaiMajor === "6" ? undefined : openaiMajor === "7" ? "openai7" : legacy(openaiMajor);
const nodeMajor = Number(process.versions.node.split(".")[0]);
const src = (file: string) => fileURLToPath(new URL(`./src/${file}`, import.meta.url));
const alias = [
  // Tests and examples import the package by its public name, served from source.
  { find: /^trajectory-recorder$/, replacement: src("index.ts") },
  { find: /^trajectory-recorder\/emulator$/, replacement: src("emulator/index.ts") },
  { find: /^trajectory-recorder\/bullmq$/, replacement: src("integrations/bullmq/index.ts") },
  {
    find: /^trajectory-recorder\/(openai-agents|ai-sdk|langchain)$/,
    replacement: src("integrations/$1/index.ts"),
  },
  ...(openaiTarget ? [{ find: /^openai(\/.*)?$/, replacement: `${openaiTarget}$1` }] : []),
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
