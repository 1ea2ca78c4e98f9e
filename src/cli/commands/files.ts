// `validate` and `inspect`: what a JSONL file of groups or trajectories holds,
// and what training would make of it, without sending anything.

import { validateGroup } from "../../trajectory/index.js";
import { parse, str } from "../args.js";
import type { Command, Output } from "../context.js";
import { type GroupsFile, type GroupsSummary, readGroupsFile, summarize } from "../groups-file.js";

export const GROUP_BY_HELP = `  --group-by KEY        trajectories (lines with messages_and_choices) sharing
                        metadata[KEY] form one group (default: scenario)`;

/** What may disappoint in training though the file is valid. */
function warnings(s: GroupsSummary): string[] {
  const out: string[] = [];
  if (s.groupsWithoutSpread > 0)
    out.push(
      `${s.groupsWithoutSpread} of ${s.groups} group(s) have rewards that are all equal (or a single trajectory): RL learns nothing from them`,
    );
  if (s.choicesWithoutLogprobs > 0)
    out.push(
      `${s.choicesWithoutLogprobs} sampled turn(s) have no logprobs: record with logprobs: true to train them`,
    );
  if (s.trajectories > 0 && s.trainableChoices === 0 && s.choicesWithoutLogprobs === 0)
    out.push("no trajectory holds a sampled turn (a Choice): there is nothing to train");
  return out;
}

/**
 * The check `train` runs before sending (tool results answering calls of
 * their own history, logprobs and token ids, scalar metadata, finish_reason),
 * as findings: each a line naming the group and the path.
 */
function checkFindings(groups: GroupsFile["groups"]): string[] {
  const silent = { warn() {} };
  return groups.flatMap((g, i) =>
    validateGroup(g, { mode: "warn", logger: silent }).problems.map(
      (p) => `group ${i + 1}: ${p.path}: ${p.message}`,
    ),
  );
}

function problemLines(file: string, problems: GroupsFile["problems"]): string[] {
  return problems.map((p) => `${file}:${p.line}: ${p.message}`);
}

export const validate: Command = {
  name: "validate",
  summary: "check a JSONL file of trajectory groups or trajectories against ART's schema",
  usage: "FILE [--group-by KEY]",
  details: `Each line is a trajectory group (ART's TrajectoryGroup JSON) or a single
trajectory. Reports every line that is not valid ART JSON, naming the field,
and warns about what would not train, with the findings of the check \`train\`
runs before sending (a tool result answering no call of its history, a
sampled turn without logprobs or token ids, metadata that is not a scalar).
Exits 1 when a line is invalid.

Options:
${GROUP_BY_HELP}`,
  async run(args, out) {
    const { values, positionals } = parse(
      args,
      { "group-by": { type: "string" } },
      { min: 1, max: 1, names: "FILE" },
    );
    const file = positionals[0] as string;
    const read = readGroupsFile(file, str(values, "group-by"));
    const summary = summarize(read.groups);
    const warned = [...warnings(summary), ...checkFindings(read.groups)];
    const valid = read.problems.length === 0;
    if (values.json) {
      out.stdout.write(
        `${JSON.stringify({ valid, problems: read.problems, warnings: warned, summary }, null, 2)}\n`,
      );
    } else {
      const lines = [
        ...problemLines(file, read.problems),
        ...warned.map((w) => `warning: ${w}`),
        valid
          ? `${file}: ${summary.groups} group(s), ${summary.trajectories} trajectories: valid ART JSON.`
          : `${file}: ${read.problems.length} invalid line(s).`,
      ];
      out.stdout.write(`${lines.join("\n")}\n`);
    }
    return valid ? 0 : 1;
  },
};

function fmt(n: number): string {
  return Number(n.toFixed(4)).toString();
}

export function describeSummary(s: GroupsSummary): string {
  const r = s.rewards;
  return [
    `groups                 ${s.groups} (${s.groupsWithSpread} with different rewards: trained; ${s.groupsWithoutSpread} with equal rewards: skipped)`,
    `trajectories           ${s.trajectories}`,
    `failed rollouts        ${s.exceptions}`,
    `reward                 ${r ? `mean ${fmt(r.mean)}, std ${fmt(r.std)}, min ${fmt(r.min)}, max ${fmt(r.max)}` : "-"}`,
    `sampled turns          ${s.trainableChoices} with logprobs (trained), ${s.choicesWithoutLogprobs} without`,
    `other messages         ${s.messages} (prompts, tool results: context only)`,
  ].join("\n");
}

export const inspect: Command = {
  name: "inspect",
  summary: "count groups, trajectories and rewards in a JSONL file, and what would be trained",
  usage: "FILE [--group-by KEY]",
  details: `Prints the counts, the spread of rewards, and which groups and turns RL would
learn from (groups whose rewards differ; sampled turns with logprobs).

Options:
${GROUP_BY_HELP}`,
  async run(args, out: Output) {
    const { values, positionals } = parse(
      args,
      { "group-by": { type: "string" } },
      { min: 1, max: 1, names: "FILE" },
    );
    const file = positionals[0] as string;
    const read = readGroupsFile(file, str(values, "group-by"));
    const summary = summarize(read.groups);
    if (values.json) {
      out.stdout.write(
        `${JSON.stringify({ ...summary, invalidLines: read.problems.length, lines: read.lines }, null, 2)}\n`,
      );
    } else {
      const invalid = read.problems.length
        ? `\ninvalid lines          ${read.problems.length} (left out; see \`validate ${file}\`)`
        : "";
      out.stdout.write(`${describeSummary(summary)}${invalid}\n`);
    }
    return 0;
  },
};
