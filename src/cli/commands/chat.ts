// `chat`: one chat completion against a model's latest checkpoint or a step.
import { inferenceModelName } from "../../client/index.js";
import { numberOption, parse, str } from "../args.js";
import { type Command, makeClient, print, UsageError } from "../context.js";

/** `entity/project/name` or a full `wandb-artifact:///` name, with an optional step. */
export function modelName(model: string, step: number | undefined): string {
  if (model.startsWith("wandb-artifact:///")) {
    if (step === undefined) return model;
    return `${model.replace(/:[^/]*$/, "")}:step${step}`;
  }
  const parts = model.split("/");
  if (parts.length !== 3 || parts.some((p) => p === "")) {
    throw new UsageError(
      `MODEL must be ENTITY/PROJECT/NAME or wandb-artifact:///ENTITY/PROJECT/NAME; got ${JSON.stringify(model)}.`,
    );
  }
  const [entity, project, name] = parts as [string, string, string];
  return inferenceModelName({ entity, project, name, step });
}

export const chat: Command = {
  name: "chat",
  summary: "send one message to a model (its latest checkpoint, or --step N)",
  usage: "MODEL MESSAGE... [--step N] [--system TEXT] [--max-tokens N] [--temperature T]",
  details: `MODEL is ENTITY/PROJECT/NAME (as created with \`models create\`) or a full
wandb-artifact:/// name. Prints the answer's text (or tool calls); --json prints
the whole completion, logprobs included.

Options:
  --step N              pin checkpoint N instead of the latest
  --system TEXT         a system message before yours
  --max-tokens N        cap on the answer's tokens
  --temperature T       sampling temperature`,
  async run(args, out) {
    const { values, positionals } = parse(
      args,
      {
        step: { type: "string" },
        system: { type: "string" },
        "max-tokens": { type: "string" },
        temperature: { type: "string" },
      },
      { min: 2, max: Number.POSITIVE_INFINITY, names: "MODEL MESSAGE" },
    );
    const step = numberOption("step", str(values, "step"), { integer: true, min: 0 });
    const maxTokens = numberOption("max-tokens", str(values, "max-tokens"), {
      integer: true,
      positive: true,
    });
    const temperature = numberOption("temperature", str(values, "temperature"), { min: 0 });
    const [model, ...words] = positionals as [string, ...string[]];
    const system = str(values, "system");
    const completion = await makeClient(values).chat.completions.create({
      model: modelName(model, step),
      messages: [
        ...(system ? [{ role: "system" as const, content: system }] : []),
        { role: "user" as const, content: words.join(" ") },
      ],
      logprobs: true,
      ...(maxTokens !== undefined ? { max_tokens: maxTokens } : {}),
      ...(temperature !== undefined ? { temperature } : {}),
    });
    const message = completion.choices[0]?.message;
    const calls = (message?.tool_calls ?? []).map((c) =>
      "function" in c ? `tool call ${c.function.name}(${c.function.arguments})` : "tool call",
    );
    print(
      out,
      values.json,
      completion,
      [message?.content ?? "", ...calls].filter(Boolean).join("\n"),
    );
    return 0;
  },
};
