// `chat`: one chat completion against a model's latest checkpoint or a step.
import { inferenceModelName } from "../../client/index.js";
import { numberOption, parse, str } from "../args.js";
import { type Command, EXIT, NotFoundCliError, print } from "../context.js";
import { isKnownModel, type Known, parseModelName } from "../known.js";
import { connect } from "../service.js";

/** The inference name of `model` (a known model, its name, or a wandb-artifact:/// name), with an optional step. */
export function modelName(known: Known, model: string, step: number | undefined): string {
  if (model.startsWith("wandb-artifact:///")) {
    if (step === undefined) return model;
    return `${model.replace(/:[^/]*$/, "")}:step${step}`;
  }
  const named = parseModelName(model);
  if (named) return inferenceModelName({ ...named, step });
  const found = known.model(model);
  if (!isKnownModel(found)) {
    throw new NotFoundCliError(
      `model ${found.id} is not known for ${known.url}, and chat needs its ENTITY/PROJECT/NAME: give that instead, or run 'models create ... --return-existing' once so the CLI knows it.`,
    );
  }
  return inferenceModelName({ ...found, step });
}

export const chat: Command = {
  name: "chat",
  summary: "send one message to a model (its latest checkpoint, or --step N)",
  usage: "MODEL MESSAGE... [--step N] [--system TEXT] [--max-tokens N] [--temperature T]",
  details: `MODEL is ENTITY/PROJECT/NAME, a full wandb-artifact:/// name, or the id (or a
unique id prefix) of a model this CLI created or found. Prints the answer's text (or tool calls); --json prints
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
      { min: 2, max: Number.POSITIVE_INFINITY, names: "MODEL MESSAGE..." },
    );
    const step = numberOption("step", str(values, "step"), { integer: true, min: 0 });
    const maxTokens = numberOption("max-tokens", str(values, "max-tokens"), {
      integer: true,
      positive: true,
    });
    const temperature = numberOption("temperature", str(values, "temperature"), { min: 0 });
    const [model, ...words] = positionals as [string, ...string[]];
    const system = str(values, "system");
    const s = await connect(values, out);
    const completion = await s.client.chat.completions.create({
      model: modelName(s.known, model, step),
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
    return EXIT.ok;
  },
};
