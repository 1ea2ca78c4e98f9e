// One replayed sample: the recorded state sent again to the current
// checkpoint, recorded as a rollout of its own; with a tool runner the agent
// loop goes on until an answer calls no tool (or maxTurns).
import type OpenAI from "openai";
import type { Recorder } from "../recorder/index.js";
import type { MessageParam, Trajectory } from "../trajectory/index.js";
import { InvalidArgumentError, isObjectLike } from "../util/argument-error.js";
import type { ReplayState, ReplayToolCall, ToolRunner } from "./types.js";

/** What every sample of a replay shares. */
export type SampleContext = {
  recorder: Recorder;
  openai: OpenAI;
  toolRunner: ToolRunner | undefined;
  maxTurns: number;
  requestOptions: Record<string, unknown>;
};

/** Records one sample of `state`; `index` tells the samples of a group apart. */
export function sampleState(
  ctx: SampleContext,
  state: ReplayState,
  index: number,
): Promise<Trajectory> {
  const metadata = {
    replay_of: state.trajectoryId,
    replay_turn: state.turn,
    replay_sample: index,
  };
  return ctx.recorder.rollout(
    async () => {
      const messages: MessageParam[] = [...state.messages];
      for (let turn = 1; ; turn++) {
        const calls = await answer(ctx, state, messages, index);
        // Tools run only for an answer the loop will answer again.
        if (calls.length === 0 || ctx.toolRunner === undefined || turn >= ctx.maxTurns) return;
        messages.push(...(await runTools(ctx.toolRunner, calls, state, messages)));
      }
    },
    { metadata },
  );
}

/** Sends the conversation, pushes the answer, and returns its tool calls. */
async function answer(
  ctx: SampleContext,
  state: ReplayState,
  messages: MessageParam[],
  index: number,
): Promise<ReplayToolCall[]> {
  const body: Record<string, unknown> = { ...ctx.requestOptions, model: "", messages };
  // A seed given is offset per sample, so the samples differ and a run repeats.
  if (typeof body.seed === "number") body.seed = body.seed + index;
  if (state.tools) body.tools = state.tools;
  const completion = (await ctx.openai.chat.completions.create(
    body as never,
  )) as OpenAI.Chat.ChatCompletion;
  const message = completion.choices[0]?.message;
  if (!message) return [];
  const calls = (message.tool_calls ?? []) as ReplayToolCall[];
  const next: MessageParam & { tool_calls?: unknown[] } = {
    role: "assistant",
    content: message.content ?? "",
  };
  if (calls.length > 0) next.tool_calls = calls;
  messages.push(next);
  return calls;
}

async function runTools(
  runner: ToolRunner,
  calls: ReplayToolCall[],
  state: ReplayState,
  messages: MessageParam[],
): Promise<MessageParam[]> {
  const call = "replayGroups: options.toolRunner(calls)";
  const out: unknown = await runner(calls, { state, messages: [...messages] });
  if (!Array.isArray(out))
    throw new InvalidArgumentError(call, "its result", "an array of tool messages", out);
  out.forEach((m: unknown, i) => {
    const ok =
      isObjectLike(m) &&
      m.role === "tool" &&
      typeof m.tool_call_id === "string" &&
      typeof m.content === "string";
    if (!ok)
      throw new InvalidArgumentError(
        call,
        `its result[${i}]`,
        '{ role: "tool", tool_call_id: string, content: string }',
        m,
      );
  });
  return out as MessageParam[];
}
