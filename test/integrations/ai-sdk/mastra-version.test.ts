// Mastra before 1.0 (what npm installs on Node 20) records rollouts that
// cannot be trained on: recordMastraAgent says so once per process, through
// the logger, as soon as an agent is wrapped.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { Agent } from "@mastra/core/agent";
import { recordMastraAgent } from "trajectory-recorder/ai-sdk";
import { describe, expect, it } from "vitest";
import { mastraGivesLogprobs } from "../../../src/integrations/ai-sdk/mastra-version.js";

const root = path.resolve(import.meta.dirname, "../../..");

/** Runs `code` as an application whose node_modules hold @mastra/core `version`. */
function application(version: string, code: string) {
  const dir = mkdtempSync(path.join(tmpdir(), "mastra-version-"));
  const pkg = path.join(dir, "node_modules", "@mastra", "core");
  mkdirSync(pkg, { recursive: true });
  writeFileSync(path.join(pkg, "package.json"), JSON.stringify({ name: "@mastra/core", version }));
  writeFileSync(path.join(dir, "main.mts"), code);
  const tsx = pathToFileURL(path.join(root, "node_modules/tsx/dist/loader.mjs")).href;
  const r = spawnSync(process.execPath, ["--import", tsx, "main.mts"], {
    cwd: dir,
    encoding: "utf8",
    env: { ...process.env, TSX_TSCONFIG_PATH: path.join(root, "tsconfig.json") },
    timeout: 120_000,
  });
  expect(r.status, r.stderr).toBe(0);
  return r;
}

// Three agents wrapped, the first two with a logger, the third with the default (console).
const WRAP_THREE = `
import { recordMastraAgent } from "trajectory-recorder/ai-sdk";
const said: string[] = [];
const logger = { warn: (m: string) => said.push(m) };
const agent = () => ({ name: "a", resolveModelConfig: async () => ({}) });
recordMastraAgent(agent(), { logger });
recordMastraAgent(agent(), { logger });
recordMastraAgent(agent());
console.log(JSON.stringify(said));
`;

describe("recordMastraAgent and the Mastra version", () => {
  it("warns once per process through the logger when @mastra/core is 0.x", () => {
    const r = application("0.24.9", WRAP_THREE);
    const said = JSON.parse(r.stdout) as string[];
    expect(said).toHaveLength(1);
    expect(said[0]).toMatch(
      /@mastra\/core 0\.24\.9 forwards neither logprobs nor token ids, so its rollouts are recorded but cannot be trained on .*Use @mastra\/core 1\.x or newer, which needs Node 22 \(said once per process\)\./,
    );
    // The default logger (console) was not used a second time.
    expect(r.stderr).not.toMatch(/forwards neither logprobs/);
  });

  it("warns on the console by default", () => {
    const r = application(
      "0.24.9",
      `import { recordMastraAgent } from "trajectory-recorder/ai-sdk";
recordMastraAgent({ name: "a", resolveModelConfig: async () => ({}) });`,
    );
    expect(r.stderr.match(/forwards neither logprobs/g)).toHaveLength(1);
  });

  it("says nothing for a @mastra/core that gives logprobs", () => {
    const r = application("1.0.0", WRAP_THREE);
    expect(JSON.parse(r.stdout)).toEqual([]);
    expect(r.stderr).toBe("");
    // In this process: the @mastra/core this repository tests against (1.x).
    const said: string[] = [];
    recordMastraAgent(new Agent({ id: "a", name: "a", instructions: "", model: "openai/x" }), {
      logger: { warn: (m) => said.push(m) },
    });
    expect(said).toEqual([]);
  });

  it("tells the versions apart by their major", () => {
    expect(mastraGivesLogprobs("0.24.9")).toBe(false);
    expect(mastraGivesLogprobs("0.10.0-alpha.1")).toBe(false);
    expect(mastraGivesLogprobs("1.0.0")).toBe(true);
    expect(mastraGivesLogprobs("1.71.0")).toBe(true);
    // A version it cannot read is given the benefit of the doubt.
    expect(mastraGivesLogprobs("workspace:*")).toBe(true);
  });
});
