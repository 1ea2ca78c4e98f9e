// `demo` and `report`, from the demo and report modules.
import { runDemo } from "../../demo/index.js";
import { writeReport } from "../../report/index.js";
import { numberOption, parse, required, str } from "../args.js";
import { type Command, print, UsageError } from "../context.js";

export const demo: Command = {
  name: "demo",
  summary: "train a small tool-using agent end to end on an embedded emulator, offline",
  usage: "[--steps N] [--report PATH | --no-report] [--seed N]",
  details: `Starts an emulator in this process, trains a fruit-stall agent that must call
a tool to answer, draws the reward per step, and writes an HTML report of the run.

Options:
  --steps N             training steps (default 8)
  --report PATH         where the HTML report goes (default ./trajectory-report.html)
  --no-report           write no report
  --seed N              the same seed gives the same run (default 1)`,
  async run(args, out) {
    const { values } = parse(
      args,
      {
        steps: { type: "string" },
        report: { type: "string" },
        "no-report": { type: "boolean" },
        seed: { type: "string" },
      },
      { min: 0, max: 0, names: "" },
    );
    if (values["no-report"] && values.report !== undefined)
      throw new UsageError("give --report PATH or --no-report, not both.");
    const result = await runDemo({
      steps: numberOption("steps", str(values, "steps"), { integer: true, positive: true }),
      seed: numberOption("seed", str(values, "seed"), { integer: true }),
      reportPath: values["no-report"] ? false : str(values, "report"),
      // With --json the progress goes to stderr and stdout holds only the result.
      out: (values.json ? out.stderr : out.stdout) as NodeJS.WritableStream,
    });
    if (values.json) print(out, true, result, "");
    return 0;
  },
};

export const report: Command = {
  name: "report",
  summary:
    "write one self-contained HTML page of a run: training curves, groups, trajectories, checkpoints compared",
  usage: "(--data-dir DIR [--model ID|NAME] | --groups FILE) --out PATH [--title TEXT]",
  details: `Reads a run's logged groups from an emulator's data directory or from a JSONL
file of groups, and writes one HTML file (no network needed to view it): reward
and training metrics per step with each step's job, each group's trajectories
side by side with their rewards and advantages, every trajectory with its
sampled tokens shaded by probability, and the answers of two checkpoints to
the same scenarios (see evaluateCheckpoints). Exits 1 when the run holds no
trajectory (the page is written and says so).

Options:
  --data-dir DIR        an emulator's --data-dir
  --model ID|NAME       with --data-dir: the model (default: the most recently active)
  --groups FILE         a JSONL file of trajectory groups instead
  --out PATH            the HTML file to write
  --title TEXT          the page's title`,
  async run(args, out) {
    const { values } = parse(
      args,
      {
        "data-dir": { type: "string" },
        model: { type: "string" },
        groups: { type: "string" },
        out: { type: "string" },
        title: { type: "string" },
      },
      { min: 0, max: 0, names: "" },
    );
    const dataDir = str(values, "data-dir");
    const groupsFile = str(values, "groups");
    if ((dataDir === undefined) === (groupsFile === undefined))
      throw new UsageError("give exactly one of --data-dir DIR or --groups FILE.");
    const written = await writeReport({
      dataDir,
      groupsFile,
      model: str(values, "model"),
      out: required(values, "out"),
      title: str(values, "title"),
    });
    if (written.trajectories === 0) {
      if (values.json) print(out, true, written, "");
      out.stderr.write(
        `Nothing to report: ${dataDir !== undefined ? `the model in ${dataDir} has no training job and no logged split` : `${groupsFile} holds no trajectory`}. Wrote ${written.path}, which says so.\n`,
      );
      return 1;
    }
    print(
      out,
      values.json,
      written,
      `Wrote ${written.path}: ${written.steps} step(s), ${written.trajectories} trajectories.`,
    );
    return 0;
  },
};
