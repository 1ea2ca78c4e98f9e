// `sessions list` and `sessions show`: production trajectories (one per
// session, or a rollout's) with their feedback and whether they may be
// trained on, read from a store's directory or a running proxy.
import type { StoredTrajectory, TrajectorySummary } from "../../store/index.js";
import { numberOption, parse, str } from "../args.js";
import { type Command, NotFoundCliError, print } from "../context.js";
import { formatNumber } from "../format.js";
import { findTrajectory, openSource, SOURCE_HELP, SOURCE_OPTIONS } from "../trajectory-source.js";

const SOURCE_USAGE = "[--store DIR | --proxy URL]";

export const sessionsList: Command = {
  name: "sessions list",
  summary: "list recorded production trajectories with their reward and eligibility",
  usage: `${SOURCE_USAGE} [--session ID] [--limit N]`,
  offline: true,
  details: `Options:
${SOURCE_HELP}
  --session ID           only the trajectories of this session
  --limit N              at most N, newest first (default 20)

Columns: the trajectory's id (the receipt feedback takes), its session, open or
finished, its calls, the reward its feedback gives (- before any), whether it
may be trained on, and how many feedbacks it has.`,
  async run(args, out) {
    const { values } = parse(
      args,
      { ...SOURCE_OPTIONS, session: { type: "string" }, limit: { type: "string" } },
      { min: 0, max: 0, names: "" },
      { service: false },
    );
    const limit = numberOption("limit", str(values, "limit") ?? "20", {
      integer: true,
      positive: true,
    }) as number;
    const session = str(values, "session");
    const source = await openSource(values);
    try {
      const rows = await source.list({ limit, ...(session !== undefined ? { session } : {}) });
      print(out, values.json, { data: rows }, table(rows, source.where));
    } finally {
      await source.close();
    }
    return 0;
  },
};

export const sessionsShow: Command = {
  name: "sessions show",
  summary: "show one trajectory (by its id or its session's) with its feedback",
  usage: `ID ${SOURCE_USAGE}`,
  offline: true,
  details: `ID is a trajectory id (trj_..., the x-trajectory-id receipt) or a session id
(then its newest trajectory).

Options:
${SOURCE_HELP}

With --json, the stored record: the trajectory with its feedback applied
(reward, metrics), every feedback, and its eligibility.`,
  async run(args, out) {
    const { values, positionals } = parse(
      args,
      SOURCE_OPTIONS,
      { min: 1, max: 1, names: "ID" },
      { service: false },
    );
    const id = positionals[0] as string;
    const source = await openSource(values);
    try {
      const found = await findTrajectory(source, id);
      if (!found)
        throw new NotFoundCliError(
          `no trajectory and no session ${JSON.stringify(id)} in ${source.where}: it was never recorded there, or the store's bounds dropped it.`,
        );
      print(out, values.json, found.record, describe(found.record, found.others));
    } finally {
      await source.close();
    }
    return 0;
  },
};

const shown = (v: number | boolean | null) =>
  v === null ? "-" : typeof v === "number" ? formatNumber(v) : v ? "yes" : "no";

function table(rows: TrajectorySummary[], where: string): string {
  if (rows.length === 0) return `No trajectories in ${where}.`;
  const head = ["TRAJECTORY", "SESSION", "STATUS", "CALLS", "REWARD", "ELIGIBLE", "FEEDBACK"];
  const cells = rows.map((r) => [
    r.id,
    r.session ?? "-",
    r.interrupted ? `${r.status}, interrupted` : r.status,
    String(r.calls),
    shown(r.reward),
    shown(r.eligible),
    String(r.feedback),
    r.updated_at,
  ]);
  head.push("UPDATED");
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((c) => (c[i] ?? "").length)));
  const line = (c: string[]) =>
    c
      .map((v, i) => v.padEnd(widths[i] ?? 0))
      .join("  ")
      .trimEnd();
  return [line(head), ...cells.map(line)].join("\n");
}

function describe(r: StoredTrajectory, others: number): string {
  const lines = [
    `Trajectory ${r.id}`,
    `  session:     ${r.session ?? "- (a rollout's)"}${others > 0 ? ` (${others} older trajectories of it)` : ""}`,
    `  status:      ${r.status}${r.interrupted ? ", a call interrupted (see its logs)" : ""}`,
    `  calls:       ${r.calls}`,
    `  model:       ${r.model ?? "-"}`,
    `  reward:      ${shown(r.reward)}`,
    `  eligible:    ${shown(r.eligible)}`,
    `  created:     ${r.created_at}`,
    `  updated:     ${r.updated_at}`,
  ];
  const metrics = Object.entries(r.trajectory.metrics ?? {});
  if (metrics.length > 0)
    lines.push(
      `  metrics:     ${metrics.map(([k, v]) => `${k}=${typeof v === "number" ? formatNumber(v) : String(v)}`).join(" ")}`,
    );
  lines.push(`Feedback (${r.feedback.length}):`);
  for (const f of r.feedback) {
    const parts = [
      f.reward !== undefined ? `reward ${formatNumber(f.reward)}` : undefined,
      f.eligible !== undefined ? (f.eligible ? "eligible" : "not eligible") : undefined,
      f.metrics
        ? Object.entries(f.metrics)
            .map(([k, v]) => `${k}=${v}`)
            .join(" ")
        : undefined,
      f.turns ? `${f.turns.length} turn values` : undefined,
      f.source ? `from ${f.source}` : undefined,
      f.comment !== undefined ? JSON.stringify(f.comment) : undefined,
    ].filter((p) => p !== undefined);
    lines.push(`  ${f.n}. ${f.created_at}  ${parts.join(", ")}`);
  }
  lines.push("Messages:");
  for (const m of r.trajectory.messages_and_choices as unknown[]) lines.push(`  ${message(m)}`);
  return lines.join("\n");
}

/** One message or choice on a line: its role and the start of its text. */
function message(m: unknown): string {
  const item = m as {
    role?: string;
    content?: unknown;
    message?: { role?: string; content?: unknown; tool_calls?: unknown[] };
    tool_calls?: unknown[];
  };
  const msg = item.message ?? item;
  const role = msg.role ?? "?";
  const text = typeof msg.content === "string" ? msg.content : JSON.stringify(msg.content ?? "");
  const tools = msg.tool_calls?.length ? ` [${msg.tool_calls.length} tool calls]` : "";
  const flat = text.replace(/\s+/g, " ");
  return `${role}: ${flat.length > 100 ? `${flat.slice(0, 99)}…` : flat}${tools}`;
}
