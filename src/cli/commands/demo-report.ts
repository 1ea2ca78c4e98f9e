// `demo` and `report`, from the demo and report modules.
import { runDemo } from "../../demo/index.js";
import {
  combineRuns,
  filesVersion,
  loadRuns,
  loadService,
  type ReportRun,
  type ReportSource,
  serveReport,
  sourceFiles,
  writeReport,
} from "../../report/index.js";
import { numberOption, parse, required, str } from "../args.js";
import { type Command, print, UsageError } from "../context.js";
import { isKnownModel } from "../known.js";
import { connect } from "../service.js";

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
  offline: true,
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
      { service: false },
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
    "an HTML page of a run (or runs compared): training curves, metrics, groups, trajectories, checkpoints; --serve follows a run live",
  usage:
    "(--data-dir DIR [--model MODEL] | --groups FILE | --model MODEL | --store DIR) (--out PATH | --serve [--port N]) [--title TEXT]",
  details: `Reads a run's logged groups from an emulator's data directory or from a JSONL
file of groups (or, with --model alone, a model's checkpoints on the service),
and writes one HTML file (no network needed to view it): reward, the
trajectories' own metrics and the trainer's metrics per step with each step's
job, each group's trajectories side by side with their rewards and advantages,
every trajectory with its sampled tokens shaded by probability, and two steps'
answers to the same scenarios (see evaluateCheckpoints). Exits 1 when the run
holds nothing (the page is written and says so).

Production: --store DIR reads a trajectory store (the --store of a proxy or
recorder, while nothing holds it) and adds a Production view: its trajectories
grouped by session, each with its reward, its feedback (reward, metrics,
comment, source, time), whether it is eligible for training, interrupted calls
and its conversation. Alone, or beside --data-dir, --groups or --model.

Two runs side by side: repeat --data-dir (or --groups), or give --model twice
(two models of one data directory, or of the service). Their curves are
overlaid and the Checkpoints view compares the same scenario across them.

MODEL is the model's id, a unique prefix of its id, ENTITY/PROJECT/NAME (also
PROJECT/NAME or its name in a data directory), as other commands take it.

Options:
  --data-dir DIR        an emulator's --data-dir (repeat to compare runs)
  --model MODEL         with --data-dir: the model (default: the most recently
                        active); alone: a model on the service (its checkpoints)
  --groups FILE         a JSONL file of trajectory groups instead (repeatable)
  --store DIR           a trajectory store's directory: its production
                        trajectories and their feedback (with --out only)
  --out PATH            the HTML file to write
  --serve               serve the report on 127.0.0.1 and follow the run: new
                        steps appear in the open page without a reload (Ctrl-C stops)
  --port N              with --serve: the port (default: a free one)
  --interval MS         with --serve: how often the page checks for changes (default 1000)
  --title TEXT          the page's title`,
  async run(args, out) {
    const { values } = parse(
      args,
      {
        "data-dir": { type: "string", multiple: true },
        model: { type: "string", multiple: true },
        groups: { type: "string", multiple: true },
        store: { type: "string" },
        out: { type: "string" },
        title: { type: "string" },
        serve: { type: "boolean" },
        port: { type: "string" },
        interval: { type: "string" },
      },
      { min: 0, max: 0, names: "" },
    );
    const dataDirs = (values["data-dir"] as string[] | undefined) ?? [];
    const models = (values.model as string[] | undefined) ?? [];
    const groupFiles = (values.groups as string[] | undefined) ?? [];
    const title = str(values, "title");
    const serve = values.serve === true;
    const store = str(values, "store");
    if (dataDirs.length > 0 && groupFiles.length > 0)
      throw new UsageError("give --data-dir or --groups, not both.");
    if (groupFiles.length > 0 && models.length > 0)
      throw new UsageError(
        "--model goes with --data-dir (or alone, for the service), not --groups.",
      );
    if (dataDirs.length + groupFiles.length + models.length === 0 && store === undefined)
      throw new UsageError("give --data-dir DIR, --groups FILE, --model MODEL or --store DIR.");
    if (store !== undefined && serve)
      throw new UsageError(
        "--store goes with --out: a store is read while no proxy holds it, so there is nothing to follow live.",
      );
    if (!serve && values.port !== undefined) throw new UsageError("--port goes with --serve.");
    if (!serve && values.interval !== undefined)
      throw new UsageError("--interval goes with --serve.");
    if (serve && values.out !== undefined)
      throw new UsageError("give --out PATH or --serve, not both.");

    let sources: ReportSource[] = [];
    // Undefined with --store alone: writeReport reads the store.
    let load: (() => Promise<ReportRun>) | undefined;
    let version: (() => Promise<string>) | undefined;
    if (dataDirs.length > 0) {
      // One directory: each --model is a run of it; several: one --model for all, or one each.
      if (dataDirs.length === 1)
        sources = (models.length ? models : [undefined]).map((model) => ({
          dataDir: dataDirs[0] as string,
          model,
        }));
      else if (models.length <= 1 || models.length === dataDirs.length)
        sources = dataDirs.map((dataDir, i) => ({
          dataDir,
          model: models.length === 1 ? models[0] : models[i],
        }));
      else
        throw new UsageError(
          `give one --model for every --data-dir (${dataDirs.length}), one for all, or none; got ${models.length}.`,
        );
    } else if (groupFiles.length > 0) sources = groupFiles.map((groupsFile) => ({ groupsFile }));
    if (sources.length > 0) {
      const chosen = sources;
      load = () => loadRuns(chosen);
      version = filesVersion(sourceFiles(chosen));
    } else if (models.length > 0) {
      // The service: each model's checkpoint list.
      const s = await connect(values, out);
      const refs = models.map((ref) => {
        const m = s.known.model(ref);
        return { id: m.id, label: isKnownModel(m) ? `${m.project}/${m.name}` : m.id };
      });
      load = async () => {
        const runs = [];
        for (const r of refs) runs.push(await loadService(s.client, r.id, r.label));
        return runs.length === 1
          ? (runs[0] as ReportRun)
          : combineRuns(runs.map((run) => ({ run })));
      };
    }
    const titled = async () => {
      const run = await (load as () => Promise<ReportRun>)();
      return title === undefined ? run : { ...run, title };
    };

    if (serve) {
      const server = await serveReport({
        load: titled,
        version,
        port: numberOption("port", str(values, "port"), { integer: true, min: 0 }),
        interval: numberOption("interval", str(values, "interval"), { integer: true, min: 50 }),
      });
      out.stdout.write(
        `Serving the live report at ${server.url} (this machine only); the page follows the run. Ctrl-C stops.\n`,
      );
      const shutdown = () => {
        server.close().then(() => process.exit(0));
      };
      process.once("SIGINT", shutdown);
      process.once("SIGTERM", shutdown);
      return -1;
    }
    const outPath = required(values, "out");
    const given = load !== undefined;
    const run = given ? await titled() : undefined;
    const written = await writeReport({
      ...(run ? { run } : {}),
      ...(store !== undefined ? { store } : {}),
      ...(title !== undefined ? { title } : {}),
      out: outPath,
    });
    const ran = written.trajectories > 0 || !!run?.training?.length || !!run?.summaries?.length;
    if (!ran && written.production === 0) {
      if (values.json) print(out, true, written, "");
      const why = [
        ...(dataDirs.length
          ? [`the model in ${dataDirs.join(", ")} has no training job and no logged split`]
          : groupFiles.length
            ? [`${groupFiles.join(", ")} holds no trajectory`]
            : models.length
              ? ["the model has no checkpoint past step 0"]
              : []),
        ...(store !== undefined ? [`the store ${store} holds no trajectory`] : []),
      ];
      out.stderr.write(
        `Nothing to report: ${why.join("; ")}. Wrote ${written.path}, which says so.\n`,
      );
      return 1;
    }
    const counts = [
      ...(given ? [`${written.steps} step(s), ${written.trajectories} trajectories`] : []),
      ...(store !== undefined ? [`${written.production} production trajectories`] : []),
    ];
    print(out, values.json, written, `Wrote ${written.path}: ${counts.join(", ")}.`);
    return 0;
  },
};
