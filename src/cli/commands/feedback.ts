// `feedback ID`: a reward (and metrics, a comment, eligibility) for a recorded
// trajectory by its receipt id, through a running proxy or on a store.
import { numberOption, parse, str } from "../args.js";
import { type Command, print, UsageError } from "../context.js";
import { formatNumber } from "../format.js";
import { openSource, SOURCE_HELP, SOURCE_OPTIONS } from "../trajectory-source.js";

export const feedback: Command = {
  name: "feedback",
  summary: "give a recorded trajectory its reward, metrics or comment, by its id",
  usage:
    "ID --reward R [--comment C] [--metric K=V ...] [--eligible | --not-eligible] [--idempotency-key K] [--store DIR | --proxy URL]",
  offline: true,
  details: `ID is the trajectory's id (trj_..., the x-trajectory-id receipt of its calls).

Options:
  --reward R             the task reward, a number (the latest feedback's is the
                         trajectory's reward)
  --comment C            free text kept with the feedback (never in the trajectory)
  --metric K=V           a metric, a number or true/false; repeat for more
  --eligible             the trajectory may be trained on (the default once it has a reward)
  --not-eligible         keep it out of training
  --idempotency-key K    a resend with the same key and content is stored once;
                         the same key with other content is refused
${SOURCE_HELP}

At least one of --reward, --metric, --comment, --eligible and --not-eligible.`,
  async run(args, out) {
    const { values, positionals } = parse(
      args,
      {
        ...SOURCE_OPTIONS,
        reward: { type: "string" },
        comment: { type: "string" },
        metric: { type: "string", multiple: true },
        eligible: { type: "boolean" },
        "not-eligible": { type: "boolean" },
        "idempotency-key": { type: "string" },
      },
      { min: 1, max: 1, names: "ID" },
      { service: false },
    );
    const id = positionals[0] as string;
    const reward = numberOption("reward", str(values, "reward"));
    const comment = str(values, "comment");
    const metrics = parseMetrics((values.metric as string[] | undefined) ?? []);
    if (values.eligible && values["not-eligible"])
      throw new UsageError("give --eligible or --not-eligible, not both.");
    const eligible = values.eligible ? true : values["not-eligible"] ? false : undefined;
    if (reward === undefined && comment === undefined && !metrics && eligible === undefined)
      throw new UsageError(
        "nothing to send: give --reward R (or --metric K=V, --comment C, --eligible, --not-eligible).",
      );
    const key = str(values, "idempotency-key");
    const source = await openSource(values);
    try {
      const { feedback: stored, created } = await source.addFeedback({
        trajectory_id: id,
        ...(reward !== undefined ? { reward } : {}),
        ...(metrics ? { metrics } : {}),
        ...(comment !== undefined ? { comment } : {}),
        ...(eligible !== undefined ? { eligible } : {}),
        ...(key !== undefined ? { idempotency_key: key } : {}),
        source: "cli",
      });
      const said = [
        stored.reward !== undefined ? `reward ${formatNumber(stored.reward)}` : undefined,
        stored.eligible !== undefined ? (stored.eligible ? "eligible" : "not eligible") : undefined,
        stored.metrics ? count(Object.keys(stored.metrics).length, "metric") : undefined,
        stored.comment !== undefined ? "a comment" : undefined,
      ].filter((p) => p !== undefined);
      print(
        out,
        values.json,
        { created, feedback: stored },
        created
          ? `Feedback ${stored.n} for ${id} stored: ${said.join(", ")}.`
          : `Feedback for ${id} was already stored with this idempotency key (feedback ${stored.n}); nothing changed.`,
      );
    } finally {
      await source.close();
    }
    return 0;
  },
};

/** `--metric K=V` values as metrics: a number or true/false each; undefined for none. */
function parseMetrics(given: string[]): Record<string, number | boolean> | undefined {
  if (given.length === 0) return undefined;
  const metrics: Record<string, number | boolean> = {};
  for (const pair of given) {
    const at = pair.indexOf("=");
    const name = at > 0 ? pair.slice(0, at) : "";
    const raw = at > 0 ? pair.slice(at + 1).trim() : "";
    const value =
      raw === "true" ? true : raw === "false" ? false : raw === "" ? Number.NaN : Number(raw);
    if (!name || (typeof value === "number" && !Number.isFinite(value)))
      throw new UsageError(
        `--metric must be NAME=VALUE with a number or true/false as the value; got ${JSON.stringify(pair)}.`,
      );
    metrics[name] = value;
  }
  return metrics;
}

const count = (n: number, noun: string) => `${n} ${noun}${n === 1 ? "" : "s"}`;
