import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";
import {
  ensurePythonOpenAI,
  PYTHON_FILES,
  pythonSkipLine,
  runNeedsPython,
} from "./test/setup/python.js";
import {
  pythonMissing,
  WANDB_TEST_FILES,
  pythonSkipLine as wandbSkipLine,
} from "./test/setup/python-wandb.js";
import { cannotInstall, missingTools, skipLine } from "./test/setup/system-tools.js";

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
// AI_MAJOR points the tests' `ai` and `@ai-sdk/*` imports at an older AI SDK
// major (6, the oldest the peer range accepts), which `.ci/run` installs into
// `.ci/ai-legacy/ai<major>` with the providers of its generation.
const aiMajor = process.env.AI_MAJOR ?? "7";
const aiLegacy = () => {
  if (aiMajor !== "6")
    throw new Error(`AI_MAJOR must be 6 or 7 (the majors the package supports), not ${aiMajor}.`);
  const dir = fileURLToPath(new URL(`./.ci/ai-legacy/ai${aiMajor}/node_modules`, import.meta.url));
  if (!existsSync(`${dir}/ai`))
    throw new Error(
      `AI_MAJOR=${aiMajor} needs ai ${aiMajor}.x in ${dir}: run \`bash .ci/run\`, or \`npm install --prefix .ci/ai-legacy/ai6 --no-save --no-package-lock ai@6 @ai-sdk/openai-compatible@2 @ai-sdk/openai@3\`.`,
    );
  return dir;
};
const aiTarget = aiMajor === "7" ? undefined : aiLegacy();
const nodeMajor = Number(process.versions.node.split(".")[0]);
const src = (file: string) => fileURLToPath(new URL(`./src/${file}`, import.meta.url));
const alias = [
  // Tests and examples import the package by its public name, served from source.
  { find: /^trajectory-recorder$/, replacement: src("index.ts") },
  { find: /^trajectory-recorder\/emulator$/, replacement: src("emulator/index.ts") },
  { find: /^trajectory-recorder\/wire$/, replacement: src("wire/entry.ts") },
  { find: /^trajectory-recorder\/core$/, replacement: src("recorder/entry.ts") },
  { find: /^trajectory-recorder\/errors$/, replacement: src("errors.ts") },
  { find: /^trajectory-recorder\/report$/, replacement: src("report/entry.ts") },
  { find: /^trajectory-recorder\/bullmq$/, replacement: src("integrations/bullmq/index.ts") },
  { find: /^trajectory-recorder\/proxy$/, replacement: src("proxy/index.ts") },
  { find: /^trajectory-recorder\/store$/, replacement: src("store/entry.ts") },
  { find: /^trajectory-recorder\/replay$/, replacement: src("replay/index.ts") },
  { find: /^trajectory-recorder\/openai-ft$/, replacement: src("migrate/entry.ts") },
  {
    find: /^trajectory-recorder\/(openai-agents|ai-sdk|langchain)$/,
    replacement: src("integrations/$1/index.ts"),
  },
  ...(openaiTarget ? [{ find: /^openai(\/.*)?$/, replacement: `${openaiTarget}$1` }] : []),
  ...(aiTarget
    ? [
        { find: /^ai(\/.*)?$/, replacement: `${aiTarget}/ai$1` },
        { find: /^@ai-sdk\/(openai|openai-compatible)$/, replacement: `${aiTarget}/@ai-sdk/$1` },
      ]
    : []),
];

// The framework packages (@openai/agents, ai, @mastra/core) need Node 22, so
// their tests belong to the Node 22 leg of the matrix.
const exclude = ["node_modules/**", "dist/**"];
if (nodeMajor < 22) exclude.push("test/integrations/**");
// redis-server and Chromium: the global setup installs them where they are
// missing and it can; where it cannot, their tests are left out, said loudly.
const missingTool = missingTools();
const noInstall = missingTool.length > 0 ? cannotInstall() : undefined;
if (noInstall) {
  exclude.push(...missingTool.flatMap((t) => t.files));
  console.warn(skipLine(missingTool, noInstall));
}
// The real wandb Python client: the global setup installs it into a cached
// venv; where Python cannot be had, its test is left out, said loudly.
const noPython = pythonMissing();
if (noPython) {
  exclude.push(...WANDB_TEST_FILES);
  console.warn(wandbSkipLine(noPython));
}

// `.lua` files (the BullMQ integration's Redis scripts) are imported as their
// text, as tsup's `text` loader does in the build.
const luaAsText = {
  name: "lua-as-text",
  transform(code: string, id: string) {
    if (!id.endsWith(".lua")) return undefined;
    return { code: `export default ${JSON.stringify(code)};`, map: null };
  },
};
// The Python openai SDK (a cached venv, built here once when a run may need
// it); where it cannot be had, its tests are left out, said loudly.
if (runNeedsPython()) {
  const python = ensurePythonOpenAI();
  if ("why" in python) {
    exclude.push(...PYTHON_FILES);
    console.warn(pythonSkipLine(python.why));
  }
}

export default defineConfig({
  plugins: [luaAsText],
  resolve: { alias },
  test: {
    include: ["test/**/*.test.ts"],
    exclude,
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    globalSetup: ["test/setup/global.ts"],
  },
});
