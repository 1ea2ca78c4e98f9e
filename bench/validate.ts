// What the check before training costs: validateGroup on recorded-sized
// groups (8 trajectories of 12 turns with tool calls, 64 logprob tokens a
// Choice), as train, log and the shipper run it on every group.
import { performance } from "node:perf_hooks";
import { validateGroup } from "trajectory-recorder";

const TRAJECTORIES = 8;
const TURNS = 12;
const TOKENS = 64;

const TOOL_RESULT = [900, 901, 902, 903];

// Each turn's prompt extends the previous one by its sampled tokens and the
// tool's result, as a real agent's does (the lineage check follows them).
function choice(turn: number, last: boolean, prompt: number[]) {
  return {
    index: 0,
    finish_reason: last ? "stop" : "tool_calls",
    logprobs: {
      content: Array.from({ length: TOKENS }, (_, i) => ({
        token: `token_id:${i}`,
        logprob: -0.1,
        bytes: null,
        top_logprobs: [],
      })),
      refusal: null,
    },
    token_ids: sampled(turn),
    prompt_token_ids: prompt,
    message: {
      role: "assistant",
      content: last ? "done" : null,
      ...(last
        ? {}
        : {
            tool_calls: [
              { id: `call_${turn}`, type: "function", function: { name: "f", arguments: "{}" } },
            ],
          }),
    },
  };
}

function sampled(turn: number): number[] {
  return Array.from({ length: TOKENS }, (_, i) => 300 + turn * TOKENS + i);
}

function trajectory() {
  const items: unknown[] = [
    { role: "system", content: "you are an agent" },
    { role: "user", content: "do it" },
  ];
  let prompt = Array.from({ length: 256 }, (_, i) => i);
  for (let turn = 0; turn < TURNS; turn++) {
    const last = turn === TURNS - 1;
    items.push(choice(turn, last, prompt));
    prompt = [...prompt, ...sampled(turn), ...TOOL_RESULT];
    if (!last) items.push({ role: "tool", tool_call_id: `call_${turn}`, content: "result" });
  }
  return { messages_and_choices: items, reward: 1, metadata: { task: "t", attempt: 1 } };
}

/** Microseconds per group (p50 over `rounds`), for the bench's table. */
export function benchValidate(rounds = 2000): Record<string, { value: string }> {
  const group = { trajectories: Array.from({ length: TRAJECTORIES }, trajectory) };
  const times: number[] = [];
  for (let i = 0; i < rounds + 200; i++) {
    const t0 = performance.now();
    validateGroup(group);
    if (i >= 200) times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  const p50 = times[Math.floor(times.length / 2)] ?? 0;
  return {
    [`validateGroup, ${TRAJECTORIES} trajectories x ${TURNS} turns, p50`]: {
      value: `${(p50 * 1000).toFixed(1)} µs`,
    },
  };
}
