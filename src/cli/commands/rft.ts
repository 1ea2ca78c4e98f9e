// `rft`: an OpenAI reinforcement fine-tuning job (a dataset of items and a
// grader) run with runRft on the service, or offline on an emulator started
// in this process (--emulator).
import { existsSync, readFileSync } from "node:fs";
import { TrainingClient } from "../../client/index.js";
import {
  type RftOptions,
  type RftResult,
  readOpenAiScenarios,
  runRft,
} from "../../migrate/index.js";
import { type GraderRewardOptions, graderReward } from "../../rewards/index.js";
import { TrainableModel } from "../../training/index.js";
import { numberOption, parse, required, str, type Values } from "../args.js";
import { type Command, EXIT, type Output, print, UsageError } from "../context.js";
import { isKnownModel, parseModelName } from "../known.js";
import { connect } from "../service.js";
import { judgeOptions } from "./replay.js";

const OPTIONS = {
  grader: { type: "string" },
  model: { type: "string" },
  emulator: { type: "boolean" },
  "base-model": { type: "string" },
  steps: { type: "string" },
  "group-size": { type: "string" },
  "items-per-step": { type: "string" },
  "learning-rate": { type: "string" },
  "max-tokens": { type: "string" },
  temperature: { type: "string" },
  seed: { type: "string" },
  validation: { type: "string" },
  "no-validation": { type: "boolean" },
  "validation-samples": { type: "string" },
  report: { type: "string" },
  "judge-model": { type: "string" },
  "judge-base-url": { type: "string" },
  "judge-api-key-file": { type: "string" },
} as const;

export const rft: Command = {
  name: "rft",
  summary: "run an OpenAI reinforcement fine-tuning job (dataset + grader) with model.train",
  usage: "FILE.jsonl --grader GRADER.json --model ENTITY/PROJECT/NAME [--emulator] [--steps 4]",
  details: `Reads an OpenAI RFT dataset (one item a line: its messages are the prompt,
the whole item is what the grader reads as {{ item.* }}) and the grader's JSON
(string_check, text_similarity, score_model, label_model, or multi over them;
python graders are refused), then for each step samples --group-size answers to
each of --items-per-step items on the model's latest checkpoint, grades them and
trains on the groups. The grader's score is printed per step, and measured on the
first and last checkpoints (--validation FILE, default the dataset itself, with
the same seeds on both). Everything is checked before the first request.

Options:
  --grader FILE         the grader's JSON, as given to OpenAI (required)
  --model MODEL         ENTITY/PROJECT/NAME of the model that samples and trains
                        (on the service: one 'models create' made or found)
  --emulator            run offline on an emulator started in this process; the
                        model is registered there (--base-model, default emulator/toy)
  --steps N             training steps (default 4)
  --group-size N        answers per item (default 8)
  --items-per-step N    items (groups) per step (default: every item)
  --learning-rate X     default 2e-5
  --max-tokens N        max_tokens of each answer
  --temperature X       temperature of each answer
  --seed N              the item order and the requests' seeds (default 1)
  --validation FILE     items scored before and after (default: the dataset)
  --no-validation       score nothing before and after
  --validation-samples N  answers per validation item (default 4)
  --report PATH         write the run's HTML report there

Model graders (score_model, label_model) need a judge:
  --judge-model NAME    the model that grades, at --judge-base-url URL (default
                        $JUDGE_BASE_URL, then OpenAI's) with the key of
                        --judge-api-key-file PATH (default $JUDGE_API_KEY, then $OPENAI_API_KEY)`,
  async run(args, out) {
    const { values, positionals } = parse(args, OPTIONS, {
      min: 1,
      max: 1,
      names: "FILE.jsonl",
    });
    const file = positionals[0] as string;
    const ref = required(values, "model");
    const named = parseModelName(ref);
    if (values.emulator === true && !named)
      throw new UsageError(`--model ${ref}: with --emulator, give ENTITY/PROJECT/NAME.`);
    if (values.validation !== undefined && values["no-validation"] === true)
      throw new UsageError("give --validation FILE or --no-validation, not both.");
    for (const [what, path] of [
      ["", file],
      ["--validation ", str(values, "validation")],
    ] as const)
      if (path !== undefined && !existsSync(path))
        throw new UsageError(`${what}${path}: no such file.`);
    const grader = readGrader(required(values, "grader"));
    const judge = judgeOptions(values);
    const graderOptions: GraderRewardOptions = judge
      ? { client: judge.client as GraderRewardOptions["client"], model: judge.model }
      : {};
    const options = {
      dataset: file,
      grader,
      graderOptions,
      validation: values["no-validation"] === true ? false : str(values, "validation"),
      ...settings(values),
      // With --json the progress goes to stderr and stdout holds only the result.
      out: (values.json ? out.stderr : out.stdout) as NodeJS.WritableStream,
    } satisfies Omit<RftOptions, "model">;
    // Checked here, before a model is registered: nothing is sent for bad input.
    graderReward(grader, graderOptions);
    await readOpenAiScenarios(file);
    if (typeof options.validation === "string") await readOpenAiScenarios(options.validation);

    if (values.emulator === true) {
      const { startEmulator } = await import("../../emulator/index.js");
      const entity = named?.entity as string;
      const emulator = await startEmulator({ port: 0, apiKeys: { "rft-key": entity } });
      try {
        const client = new TrainingClient({ apiKey: "rft-key", baseURL: emulator.url });
        const model = await TrainableModel.register(client, {
          entity,
          project: named?.project as string,
          name: named?.name as string,
          baseModel: str(values, "base-model") ?? "emulator/toy",
        });
        out.stderr.write(`emulator at ${emulator.url}\n`);
        return report(out, values, await runRft({ ...options, model }));
      } finally {
        await emulator.close();
      }
    }
    const s = await connect(values, out);
    const known = s.known.model(ref);
    if (!isKnownModel(known))
      throw new UsageError(
        `rft needs the model's name to sample from it; ${ref} is known here only by its id: run 'models create ... --return-existing' once, or give ENTITY/PROJECT/NAME.`,
      );
    const model = await TrainableModel.register(s.client, {
      entity: known.entity,
      project: known.project,
      name: known.name,
      baseModel: known.base_model,
    });
    return report(out, values, await runRft({ ...options, model }));
  },
};

function readGrader(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new UsageError(
      `--grader ${path}: could not be read (${(error as NodeJS.ErrnoException).code ?? String(error)}).`,
    );
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new UsageError(`--grader ${path}: not JSON (${(error as Error).message}).`);
  }
}

function settings(values: Values) {
  const int = (name: string, min: number) =>
    numberOption(name, str(values, name), { integer: true, min });
  const requestOptions: Record<string, unknown> = {};
  const maxTokens = int("max-tokens", 1);
  const temperature = numberOption("temperature", str(values, "temperature"), { min: 0 });
  if (maxTokens !== undefined) requestOptions.max_tokens = maxTokens;
  if (temperature !== undefined) requestOptions.temperature = temperature;
  const defined = <T extends object>(o: T) =>
    Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
  return defined({
    steps: int("steps", 1),
    groupSize: int("group-size", 2),
    itemsPerStep: int("items-per-step", 1),
    learningRate: numberOption("learning-rate", str(values, "learning-rate"), { positive: true }),
    seed: numberOption("seed", str(values, "seed"), { integer: true }),
    validationSamples: int("validation-samples", 1),
    reportPath: str(values, "report"),
    requestOptions,
  });
}

function report(out: Output, values: Values, result: RftResult): number {
  const line = result.after
    ? `grader score ${result.before?.score.toFixed(3)} -> ${result.after.score.toFixed(3)} (checkpoint ${result.before?.step} -> ${result.after.step})`
    : `trained ${result.steps.length} step(s): the model is at step ${result.steps.at(-1)?.checkpoint}`;
  if (values.json) print(out, true, result, "");
  else out.stdout.write(`${line}\n`);
  return EXIT.ok;
}
