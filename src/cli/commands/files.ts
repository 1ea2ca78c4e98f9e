// `validate` and `inspect`: what a JSONL file of groups, trajectories or SFT
// lines holds, and what training would make of it, without sending anything.
// Both read the file as a stream, in one pass.

import { groupTokenSharing, type TokenSharing, validateGroup } from "../../trajectory/index.js";
import { parse, str } from "../args.js";
import { type Command, EXIT, type Output } from "../context.js";
import { type GroupsSummary, parseLine, readLines, SummaryBuilder } from "../groups-file.js";

export const GROUP_BY_HELP = `  --group-by KEY        trajectories (lines with messages_and_choices) sharing
                        metadata[KEY] form one group (default: scenario)`;

/** What may disappoint in training though the file is valid. */
function warnings(s: GroupsSummary): string[] {
  const out: string[] = [];
  if (s.emptyGroups > 0)
    out.push(
      `${s.emptyGroups} group(s) hold no trajectory ({"trajectories":[]}, or every rollout failed): nothing to train or log in them`,
    );
  if (s.groupsWithoutSpread > 0)
    out.push(
      `${s.groupsWithoutSpread} of ${s.groups} group(s) have rewards that are all equal (or a single trajectory): RL learns nothing from them`,
    );
  if (s.choicesWithoutLogprobs > 0)
    out.push(
      `${s.choicesWithoutLogprobs} sampled turn(s) have no logprobs: record with logprobs: true to train them`,
    );
  if (s.groups > 0 && s.trainableChoices === 0)
    out.push(
      s.trajectories === 0
        ? "no group holds a trajectory: `train` refuses this file"
        : "no trajectory holds a sampled turn with logprobs: `train` refuses this file",
    );
  return out;
}

/**
 * Findings of the check `train` runs before sending (tool results answering
 * calls of their own history, token ids, scalar metadata, finish_reason),
 * each said once: the first place it was found, and how many more.
 */
class Findings {
  readonly #byMessage = new Map<string, { at: string; more: number }>();
  // Said by the summary's warnings already.
  static readonly #covered = /without logprobs|no trajectory holds a trainable Choice/;

  /** Adds the group's findings; returns what its histories share in tokens. */
  add(where: string, group: unknown): TokenSharing {
    const silent = { warn() {} };
    const found = validateGroup(group, { mode: "warn", logger: silent, requireTrainable: false });
    for (const p of found.problems) {
      if (Findings.#covered.test(p.message)) continue;
      const seen = this.#byMessage.get(p.message);
      if (seen) seen.more += 1;
      else this.#byMessage.set(p.message, { at: `${where}: ${p.path}`, more: 0 });
    }
    return found.tokens;
  }

  lines(): string[] {
    return [...this.#byMessage].map(
      ([message, { at, more }]) =>
        `${at}: ${message}${more > 0 ? ` (and ${more} more like it)` : ""}`,
    );
  }
}

/** What the histories share in tokens, summed over the groups, with the group that repeats most. */
class TokenTally {
  readonly totals = {
    histories: 0,
    splits: 0,
    duplicatePrefixTokens: 0,
    mostAt: null as string | null,
  };
  #most = 0;

  add(where: string, t: TokenSharing): void {
    this.totals.histories += t.histories;
    this.totals.splits += t.splits;
    this.totals.duplicatePrefixTokens += t.duplicatePrefixTokens;
    if (t.duplicatePrefixTokens > this.#most) {
      this.#most = t.duplicatePrefixTokens;
      this.totals.mostAt = where;
    }
  }

  /** One line on the token ids, when any history carries them. */
  line(): string | undefined {
    const t = this.totals;
    if (t.histories === 0) return undefined;
    const most = t.mostAt ? ` (most in ${t.mostAt}: ${this.#most})` : "";
    return `token ids: ${t.histories} histories carry them; ${t.splits} split(s) where the tokens diverged; ${t.duplicatePrefixTokens} prefix token(s) a trainer reads more than once, as the service's format cannot share a prefix${most}`;
  }
}

/** One pass over the file: its summary, its invalid lines and (with `check`) the findings. */
async function scan(file: string, groupBy: string | undefined, check: boolean) {
  const summary = new SummaryBuilder();
  const findings = new Findings();
  const tally = new TokenTally();
  const problems: { line: number; message: string }[] = [];
  const lines = { groups: 0, trajectories: 0, sft: 0 };
  for await (const { line, text } of readLines(file)) {
    const read = parseLine(text, line, groupBy ?? "scenario");
    if (read.kind === "group") {
      lines.groups += 1;
      summary.addGroup(read.group);
      const where = `${file}:${line}`;
      tally.add(
        where,
        check ? findings.add(where, read.group) : groupTokenSharing(read.group.trajectories),
      );
    } else if (read.kind === "trajectory") {
      lines.trajectories += 1;
      summary.addKeyed(read.key, read.trajectory);
      const where = `${file}:${line}`;
      tally.add(
        where,
        check
          ? findings.add(where, { trajectories: [read.trajectory.toJSON()] })
          : groupTokenSharing([read.trajectory]),
      );
    } else if (read.kind === "sft") {
      lines.sft += 1;
      summary.addSftLine();
    } else problems.push({ line: read.line, message: read.message });
  }
  return {
    summary: summary.result(),
    findings: findings.lines(),
    tokens: tally.totals,
    tokenLine: tally.line(),
    problems,
    lines,
  };
}

export const validate: Command = {
  name: "validate",
  summary: "check a JSONL file of trajectory groups, trajectories or SFT lines",
  usage: "FILE [--group-by KEY]",
  details: `Each line is a trajectory group (ART's TrajectoryGroup JSON), a single
trajectory, or an SFT line ({messages, tools?}, as \`sft\` reads it). Reports
every line that is not valid, naming the field, and warns about what would
not train, with the findings of the check \`train\` runs before sending (a tool
result answering no call of its history, a sampled turn without token ids,
metadata that is not a scalar), each finding once. When the turns carry token
ids, says what the histories share: the splits the recorder made where the
tokens diverged, and the prefix tokens a trainer reads once per history (a
group line's histories together; a trajectory line's on their own).
Exits 3 when a line is invalid, or when \`train\` would refuse the file (no
trajectory holds a sampled turn with logprobs), as \`log\`, \`train\` and
\`sft\` do on the same file.

Options:
${GROUP_BY_HELP}`,
  offline: true,
  async run(args, out) {
    const { values, positionals } = parse(
      args,
      { "group-by": { type: "string" } },
      { min: 1, max: 1, names: "FILE" },
      { service: false },
    );
    const file = positionals[0] as string;
    const read = await scan(file, str(values, "group-by"), true);
    const { summary } = read;
    const warned = [...warnings(summary), ...read.findings];
    // As docs/cli.md's table says: the files `train` refuses give 3 here too.
    const trainRefuses = summary.groups > 0 && summary.trainableChoices === 0;
    const valid = read.problems.length === 0;
    if (values.json) {
      out.stdout.write(
        `${JSON.stringify({ valid, train_refuses: trainRefuses, problems: read.problems, warnings: warned, summary, tokens: read.tokens, lines: read.lines }, null, 2)}\n`,
      );
    } else {
      const what = [
        `${summary.groups} group(s), ${summary.trajectories} trajectories`,
        summary.sftLines > 0 ? `, ${summary.sftLines} SFT line(s)` : "",
      ].join("");
      const lines = [
        ...read.problems.map((p) => `${file}:${p.line}: ${p.message}`),
        ...warned.map((w) => `warning: ${w}`),
        ...(read.tokenLine ? [read.tokenLine] : []),
        !valid
          ? `${file}: ${read.problems.length} invalid line(s).`
          : trainRefuses
            ? `${file}: ${what}: every line is valid, but \`train\` refuses the file.`
            : `${file}: ${what}: valid.`,
      ];
      out.stdout.write(`${lines.join("\n")}\n`);
    }
    return valid && !trainRefuses ? EXIT.ok : EXIT.invalidData;
  },
};

function fmt(n: number): string {
  return Number(n.toPrecision(6)).toString();
}

export function describeSummary(s: GroupsSummary): string {
  const r = s.rewards;
  const nothing =
    s.groups > 0 && s.trainableChoices === 0
      ? "\nnothing to train       no sampled turn has logprobs: `train` refuses this file"
      : "";
  return (
    [
      `groups                 ${s.groups} (${s.groupsWithSpread} with different rewards: RL can learn from them; ${s.groupsWithoutSpread} with equal rewards: left out${s.emptyGroups ? `; ${s.emptyGroups} empty` : ""})`,
      `trajectories           ${s.trajectories}`,
      `failed rollouts        ${s.exceptions}`,
      `reward                 ${r ? `mean ${fmt(r.mean)}, std ${fmt(r.std)}, min ${fmt(r.min)}, max ${fmt(r.max)}` : "-"}`,
      `sampled turns          ${s.trainableChoices} with logprobs: trainable; ${s.choicesWithoutLogprobs} without: not trainable`,
      `other messages         ${s.messages} (prompts, tool results: context only)`,
      ...(s.sftLines > 0 ? [`SFT lines              ${s.sftLines} (for \`sft\`)`] : []),
    ].join("\n") + nothing
  );
}

export const inspect: Command = {
  name: "inspect",
  summary: "count groups, trajectories and rewards in a JSONL file, and what would be trained",
  usage: "FILE [--group-by KEY]",
  details: `Prints the counts, the spread of rewards, and which groups and turns RL could
learn from (groups whose rewards differ; sampled turns with logprobs). When the
turns carry token ids, also what the histories share (as \`validate\` says it).

Options:
${GROUP_BY_HELP}`,
  offline: true,
  async run(args, out: Output) {
    const { values, positionals } = parse(
      args,
      { "group-by": { type: "string" } },
      { min: 1, max: 1, names: "FILE" },
      { service: false },
    );
    const file = positionals[0] as string;
    const read = await scan(file, str(values, "group-by"), false);
    if (values.json) {
      out.stdout.write(
        `${JSON.stringify({ ...read.summary, tokens: read.tokens, invalidLines: read.problems.length, lines: read.lines }, null, 2)}\n`,
      );
    } else {
      const invalid = read.problems.length
        ? `\ninvalid lines          ${read.problems.length} (left out; see \`validate ${file}\`)`
        : "";
      const tokens = read.tokenLine ? `\n${read.tokenLine}` : "";
      out.stdout.write(`${describeSummary(read.summary)}${tokens}${invalid}\n`);
    }
    return EXIT.ok;
  },
};
