// What the CLI and the emulator cost on large files and requests: `inspect`,
// `validate` and the reading `log`/`train` do, on a JSONL file of
// BENCH_CLI_TRAJECTORIES standalone trajectories (default 1,000,000) sharing
// 1,000 scenarios, and the emulator's /log answering one request of
// BENCH_LOG_TRAJECTORIES (default 200,000). Each row is the time per 100,000
// trajectories: linear work keeps it flat as the counts grow.
import { createWriteStream } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { startEmulator } from "trajectory-recorder/emulator";
import { readGroupsFile } from "../src/cli/groups-file.js";
import { main } from "../src/cli/main.js";

const FILE_TRAJECTORIES = Number(process.env.BENCH_CLI_TRAJECTORIES ?? 1_000_000);
const LOG_TRAJECTORIES = Number(process.env.BENCH_LOG_TRAJECTORIES ?? 200_000);

function line(i: number): string {
  const content = i % 2 ? "red" : "blue";
  return JSON.stringify({
    messages_and_choices: [
      { role: "user", content: "say red" },
      {
        index: 0,
        finish_reason: "stop",
        message: { role: "assistant", content },
        logprobs: { content: [{ token: content, logprob: -0.5, bytes: null, top_logprobs: [] }] },
        token_ids: [7],
        prompt_token_ids: [1, 2],
      },
    ],
    reward: i % 2,
    metadata: { scenario: `s${i % 1000}` },
  });
}

async function writeFile(file: string, n: number): Promise<void> {
  const out = createWriteStream(file);
  for (let i = 0; i < n; i++) {
    if (!out.write(`${line(i)}\n`)) await new Promise<void>((r) => out.once("drain", () => r()));
  }
  await new Promise<void>((r) => out.end(() => r()));
}

const per100k = (ms: number, n: number) => `${((ms / n) * 100_000).toFixed(0)} ms`;

async function timed(run: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await run();
  return performance.now() - start;
}

const quiet = { stdout: { write: () => true }, stderr: { write: () => true } };

export async function benchCli(): Promise<void> {
  const dir = await mkdtemp(path.join(tmpdir(), "tr-bench-cli-"));
  const file = path.join(dir, "trajectories.jsonl");
  try {
    await writeFile(file, FILE_TRAJECTORIES);
    const rows: Record<string, { value: string }> = {};
    for (const command of ["inspect", "validate"]) {
      let code = -1;
      const ms = await timed(async () => {
        code = await main([command, file], quiet);
      });
      if (code !== 0) throw new Error(`${command} exited ${code}`);
      rows[`${command}, per 100k trajectories (${FILE_TRAJECTORIES} in the file)`] = {
        value: per100k(ms, FILE_TRAJECTORIES),
      };
    }
    const read = await timed(() => readGroupsFile(file));
    rows[`reading for log/train, per 100k trajectories (${FILE_TRAJECTORIES})`] = {
      value: per100k(read, FILE_TRAJECTORIES),
    };

    const emu = await startEmulator({ port: 0, apiKeys: { k: "me" }, maxBodyBytes: 2 ** 31 - 1 });
    try {
      const headers = { authorization: "Bearer k", "content-type": "application/json" };
      const model = (await (
        await fetch(`${emu.url}/preview/models`, {
          method: "POST",
          headers,
          body: JSON.stringify({ project: "bench", name: "cli", base_model: "toy" }),
        })
      ).json()) as { id: string };
      const pieces: string[] = [];
      for (let i = 0; i < LOG_TRAJECTORIES; i++) pieces.push(line(i));
      const body = `{"split":"val","trajectory_groups":[{"trajectories":[${pieces.join(",")}]}]}`;
      let status = 0;
      const ms = await timed(async () => {
        const r = await fetch(`${emu.url}/preview/models/${model.id}/log`, {
          method: "POST",
          headers,
          body,
        });
        status = r.status;
        await r.text();
      });
      if (status !== 200) throw new Error(`the emulator's /log answered ${status}`);
      rows[`emulator /log, one request, per 100k trajectories (${LOG_TRAJECTORIES})`] = {
        value: per100k(ms, LOG_TRAJECTORIES),
      };
    } finally {
      await emu.close();
    }
    console.table(rows);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
