// A small real run on the emulator, kept in a data directory: tool-calling
// rollouts trained twice, and one logged validation split.
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { call, createModel, start, waitForJob } from "../emulator/helpers.js";

const TOOLS = [
  {
    type: "function",
    function: {
      name: "check_stock",
      parameters: {
        type: "object",
        properties: { fruit: { type: "string", enum: ["apple", "banana"] } },
        required: ["fruit"],
      },
    },
  },
];

export async function recordedRun(): Promise<{ dataDir: string; modelName: string }> {
  const dataDir = await mkdtemp(path.join(tmpdir(), "report-run-"));
  const emu = await start({ dataDir });
  try {
    const m = await createModel(emu, "stall <agent>");
    const name = `wandb-artifact:///${m.entity}/${m.project}/${m.name}`;
    const groupsAt = async (seed: number) => {
      const groups = [];
      for (const fruit of ["apple", "banana"]) {
        const prompt = `how many ${fruit} are left`;
        const r = await call(emu, "POST", "/chat/completions", {
          model: name,
          messages: [{ role: "user", content: prompt }],
          tools: TOOLS,
          n: 6,
          max_tokens: 3,
          logprobs: true,
          seed: seed + fruit.length,
        });
        groups.push({
          trajectories: r.json.choices.map((c: any) => ({
            messages_and_choices: [{ role: "user", content: prompt }, c],
            tools: TOOLS,
            reward: c.message.tool_calls?.length ? 1 : 0,
            metadata: { fruit },
          })),
        });
      }
      return groups;
    };
    for (let step = 0; step < 2; step++) {
      const job = await call(emu, "POST", "/preview/training-jobs", {
        model_id: m.id,
        trajectory_groups: await groupsAt(10 + step),
      });
      const events = await waitForJob(emu, job.json.id);
      if (events.at(-1).type !== "training_ended") throw new Error(JSON.stringify(events.at(-1)));
    }
    await call(emu, "POST", `/preview/models/${m.id}/log`, {
      split: "val",
      trajectory_groups: await groupsAt(99),
    });
    return { dataDir, modelName: m.name };
  } finally {
    await emu.close();
  }
}
