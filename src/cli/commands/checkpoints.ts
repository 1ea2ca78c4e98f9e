// `checkpoints list` and `checkpoints delete`.
import { numberOption, parse, required, str } from "../args.js";
import { type Command, makeClient, print, UsageError } from "../context.js";

export const checkpointsList: Command = {
  name: "checkpoints list",
  summary: "list a model's checkpoints with their metrics",
  usage: "MODEL_ID [--order asc|desc] [--limit N]",
  details: `Options:
  --order asc|desc      by step (default asc)
  --limit N             at most N checkpoints (default: all)`,
  async run(args, out) {
    const { values, positionals } = parse(
      args,
      { order: { type: "string" }, limit: { type: "string" } },
      { min: 1, max: 1, names: "MODEL_ID" },
    );
    const order = str(values, "order") ?? "asc";
    if (order !== "asc" && order !== "desc") {
      throw new UsageError(`--order must be asc or desc; got ${JSON.stringify(order)}.`);
    }
    const limit = numberOption("limit", str(values, "limit"), { integer: true, positive: true });
    const client = makeClient(values);
    const all = [];
    for await (const cp of client.models.checkpoints.list(positionals[0] as string, {
      order,
      limit: Math.min(limit ?? 100, 100),
    })) {
      all.push(cp);
      if (limit !== undefined && all.length >= limit) break;
    }
    const lines = all.map((cp) => {
      const metrics = Object.entries(cp.metrics ?? {})
        .map(([k, v]) => `${k}=${typeof v === "number" ? Number(v.toFixed(4)) : v}`)
        .join(" ");
      return `step ${cp.step}\t${cp.id}${metrics ? `\t${metrics}` : ""}`;
    });
    print(out, values.json, all, lines.length > 0 ? lines.join("\n") : "No checkpoints.");
    return 0;
  },
};

export const checkpointsDelete: Command = {
  name: "checkpoints delete",
  summary: "delete checkpoints of a model by step",
  usage: "MODEL_ID --steps N[,N...]",
  details: `Options:
  --steps N[,N...]      the steps to delete, comma separated`,
  async run(args, out) {
    const { values, positionals } = parse(
      args,
      { steps: { type: "string" } },
      { min: 1, max: 1, names: "MODEL_ID" },
    );
    const steps = required(values, "steps")
      .split(",")
      .map((s) => numberOption("steps", s.trim(), { integer: true, min: 0 }) as number);
    const answer = await makeClient(values).models.checkpoints.delete(positionals[0] as string, {
      steps,
    });
    const missing = answer.not_found_steps ?? [];
    print(
      out,
      values.json,
      answer,
      `Deleted ${answer.deleted_count} checkpoint(s)${missing.length ? `; no checkpoint at step(s) ${missing.join(", ")}` : ""}.`,
    );
    return 0;
  },
};
