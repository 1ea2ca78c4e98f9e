// `import openai-ft`: an OpenAI fine-tuning file into the SFT rows `sft` trains,
// streamed, with what became of every line.
import { type ImportedLine, importOpenAiFt } from "../../migrate/index.js";
import { InvalidArgumentError } from "../../util/argument-error.js";
import { parse, required } from "../args.js";
import { type Command, EXIT, type Output, UsageError } from "../context.js";

type Report = Omit<ImportedLine, "row">;

export const importOpenAiFtCommand: Command = {
  name: "import openai-ft",
  summary: "convert an OpenAI fine-tuning JSONL file into SFT rows for `sft`",
  usage: "FILE.jsonl --out ROWS.jsonl [--preferred-as-sft]",
  details: `Reads OpenAI's chat fine-tuning format (system, developer, user, assistant and
tool messages, tool_calls, tools, the legacy functions/function_call form,
per-message weight, parallel_tool_calls) one line at a time, and writes one
{messages, tools?} row per usable line. Every line not taken as it is gets a
report line: converted (what changed), refused (line number and field path),
or a preference (DPO) example. The service trains every assistant message of a
row, so weight-0 messages after the last trained one are dropped, and earlier
ones stay as context and are trained too (each such line says so).
Exit code 3 when any line was refused (the other rows are written).

Options:
  --out FILE            where the SFT rows go (required)
  --preferred-as-sft    train a preference example's preferred answer as SFT
                        (otherwise preference lines are counted: the service has
                        no DPO endpoint)`,
  offline: true,
  async run(args, out: Output) {
    const { values, positionals } = parse(
      args,
      { out: { type: "string" }, "preferred-as-sft": { type: "boolean" } },
      { min: 1, max: 1, names: "FILE.jsonl" },
      { service: false },
    );
    const file = positionals[0] as string;
    const target = required(values, "out");
    const reports: Report[] = [];
    const summary = await importOpenAiFt(file, target, {
      preferredAsSft: values["preferred-as-sft"] === true,
      onLine(line) {
        if (values.json) {
          if (line.status !== "accepted") reports.push(line);
        } else if (line.status === "converted" || line.status === "refused") {
          const what = line.status === "refused" ? line.errors : line.changes;
          out.stdout.write(`${file}:${line.line}: ${line.status}: ${what.join("; ")}\n`);
        }
      },
    }).catch(asUsageError);
    if (values.json) {
      out.stdout.write(`${JSON.stringify({ ...summary, out: target, lines: reports }, null, 2)}\n`);
    } else {
      const preference = summary.preference
        ? `\n${summary.preference} preference (DPO) line(s) not converted: the Training Service has no DPO endpoint; --preferred-as-sft trains their preferred answers as SFT.`
        : "";
      out.stdout.write(
        `${file}: ${summary.lines} line(s): ${summary.accepted} accepted, ${summary.converted} converted, ${summary.refused} refused, ${summary.preference} preference; ${summary.rows} row(s) written to ${target}.${preference}\n`,
      );
    }
    return summary.refused > 0 ? EXIT.invalidData : EXIT.ok;
  },
};

// A path that cannot be opened is the command line's mistake (exit 2), said as
// the other file-reading commands say it.
function asUsageError(error: unknown): never {
  if (
    InvalidArgumentError.isInstance(error) &&
    (error.argument === "input" || error.argument === "output")
  ) {
    const what = error.message.replace(/^.*?: (input|output): /, "");
    throw new UsageError(error.argument === "output" ? `--out: ${what}` : what);
  }
  throw error;
}
