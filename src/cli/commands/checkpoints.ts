// `checkpoints list` and `checkpoints delete`.
import { numberOption, parse, required, str } from "../args.js";
import { type Command, EXIT, print, UsageError } from "../context.js";
import { plainMetrics } from "../format.js";
import { confirm, connect, YES_HELP, YES_OPTION } from "../service.js";
import { MODEL_REF_HELP } from "./models.js";

export const checkpointsList: Command = {
  name: "checkpoints list",
  summary: "list a model's checkpoints with their metrics",
  usage: "MODEL [--order asc|desc] [--limit N]",
  details: `${MODEL_REF_HELP}

Options:
  --order asc|desc      by step (default asc)
  --limit N             at most N checkpoints (default: all)`,
  async run(args, out) {
    const { values, positionals } = parse(
      args,
      { order: { type: "string" }, limit: { type: "string" } },
      { min: 1, max: 1, names: "MODEL" },
    );
    const order = str(values, "order") ?? "asc";
    if (order !== "asc" && order !== "desc") {
      throw new UsageError(`--order must be asc or desc; got ${JSON.stringify(order)}.`);
    }
    const limit = numberOption("limit", str(values, "limit"), { integer: true, positive: true });
    const s = await connect(values, out);
    const modelId = s.known.model(positionals[0] as string).id;
    const all = [];
    for await (const cp of s.client.models.checkpoints.list(modelId, {
      order,
      limit: Math.min(limit ?? 100, 100),
    })) {
      all.push(cp);
      if (limit !== undefined && all.length >= limit) break;
    }
    const lines = all.map((cp) => {
      const metrics = plainMetrics(cp.metrics ?? {});
      return `step ${cp.step}\t${cp.id}${metrics ? `\t${metrics}` : ""}`;
    });
    print(out, values.json, all, lines.length > 0 ? lines.join("\n") : "No checkpoints.");
    return EXIT.ok;
  },
};

export const checkpointsDelete: Command = {
  name: "checkpoints delete",
  summary: "delete checkpoints of a model by step (asks first)",
  usage: "MODEL --steps N[,N...] [--yes]",
  details: `${MODEL_REF_HELP}
Asks on a terminal; elsewhere --yes is required. Exits 4 when a step has no
checkpoint (the others are deleted).

Options:
  --steps N[,N...]      the steps to delete, comma separated
${YES_HELP}`,
  async run(args, out) {
    const { values, positionals } = parse(
      args,
      { steps: { type: "string" }, ...YES_OPTION },
      { min: 1, max: 1, names: "MODEL" },
    );
    const steps = required(values, "steps")
      .split(",")
      .map((s) => numberOption("steps", s.trim(), { integer: true, min: 0 }) as number);
    const s = await connect(values, out);
    const modelId = s.known.model(positionals[0] as string).id;
    const ok = await confirm(
      values,
      out,
      `Delete the checkpoint(s) at step(s) ${steps.join(", ")} of model ${modelId}?`,
    );
    if (!ok) {
      out.stderr.write("Nothing was deleted.\n");
      return EXIT.failure;
    }
    const answer = await s.client.models.checkpoints.delete(modelId, { steps });
    const missing = answer.not_found_steps ?? [];
    if (missing.length > 0) {
      // What was deleted is said; the steps that were not there make it exit 4.
      const error = `model ${modelId} has no checkpoint at step(s) ${missing.join(", ")}.`;
      if (values.json)
        print(out, true, { ...answer, error: { type: "not_found", message: error } }, "");
      else out.stdout.write(`Deleted ${answer.deleted_count} checkpoint(s).\n`);
      out.stderr.write(`trajectory-recorder checkpoints delete: ${error}\n`);
      return EXIT.notFound;
    }
    const said = `Deleted ${answer.deleted_count} checkpoint(s).`;
    print(out, values.json, answer, said);
    return EXIT.ok;
  },
};
