// examples/proxy/orchestrator.py as CI runs it: the emulator, the proxy CLI
// (`trajectory-recorder proxy --model ...`), and the Python orchestrator
// driving rollouts, rewards, groups and training through the proxy's API.
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { startEmulator } from "trajectory-recorder/emulator";
import { expect, it } from "vitest";
import { start, waitForOutput } from "../cli/run.js";
import { python } from "./helpers.js";

const EXAMPLE = fileURLToPath(new URL("../../examples/proxy/orchestrator.py", import.meta.url));

it("runs the Python orchestrator example against the proxy CLI: it trains, and the reward rises", async () => {
  const emulator = await startEmulator({ port: 0, apiKeys: ["example-key-0123"] });
  const proxy = start(
    [
      "proxy",
      "--model",
      "demo/python-agent",
      "--base-model",
      "emulator/toy",
      "--port",
      "0",
      "--base-url",
      emulator.url,
    ],
    { WANDB_API_KEY: "example-key-0123", PROXY_CONTROL_KEY: "control-key-0123" },
  );
  try {
    const shown = await waitForOutput(proxy, /Recording proxy listening on (\S+)/);
    const url = /Recording proxy listening on (\S+)/.exec(shown)?.[1] as string;
    expect(shown).not.toContain("control-key-0123");
    const out = await new Promise<string>((resolve, reject) =>
      execFile(
        python(),
        [EXAMPLE],
        {
          env: {
            PATH: process.env.PATH,
            PROXY_URL: url,
            PROXY_CONTROL_KEY: "control-key-0123",
            STEPS: "4",
          },
          timeout: 200_000,
        },
        (error, stdout, stderr) =>
          error ? reject(new Error(`${error.message}\n${stdout}\n${stderr}`)) : resolve(stdout),
      ),
    );
    expect(out).toMatch(/step 3: reward \d\.\d{3} -> checkpoint \d+/);
    const rewards = JSON.parse(out.trim().split("\n").at(-1) as string).rewards as number[];
    expect(rewards).toHaveLength(5);
    expect(rewards.at(-1)!).toBeGreaterThan(rewards[0]! + 0.2);
  } finally {
    proxy.kill("SIGTERM");
    await emulator.close();
  }
}, 240_000);
