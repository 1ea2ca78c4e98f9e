// JSONL files of trajectory groups or trajectories, as `log`, `train`, `sft`,
// `validate` and `inspect` read them. A line holding `trajectories` is a
// group; a line holding `messages_and_choices` is one trajectory, grouped
// with the others that share its `metadata[groupBy]`.
import { readFileSync } from "node:fs";
import { isChoice, Trajectory, TrajectoryGroup } from "../trajectory/index.js";
import { errorMessage } from "../util/error-message.js";
import { UsageError } from "./context.js";

export interface GroupsFile {
  groups: TrajectoryGroup[];
  /** Lines that could not be read, each with what is wrong. */
  problems: { line: number; message: string }[];
  /** How many lines held groups and how many held single trajectories. */
  lines: { groups: number; trajectories: number };
}

/** Reads `path`; throws UsageError when the file itself cannot be read. */
export function readGroupsFile(path: string, groupBy = "scenario"): GroupsFile {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? errorMessage(error);
    throw new UsageError(`the file ${path} could not be read (${code}).`);
  }
  const groups: TrajectoryGroup[] = [];
  const byKey = new Map<string, Trajectory[]>();
  const problems: GroupsFile["problems"] = [];
  const lines = { groups: 0, trajectories: 0 };
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = index + 1;
    if (raw.trim() === "") return;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (error) {
      problems.push({ line, message: `not JSON (${errorMessage(error)})` });
      return;
    }
    try {
      if (value && typeof value === "object" && "trajectories" in value) {
        groups.push(TrajectoryGroup.fromJSON(value));
        lines.groups += 1;
      } else if (value && typeof value === "object" && "messages_and_choices" in value) {
        const t = Trajectory.fromJSON(value);
        const key = t.metadata[groupBy];
        const id = key === undefined ? "" : JSON.stringify(key);
        byKey.set(id, [...(byKey.get(id) ?? []), t]);
        lines.trajectories += 1;
      } else {
        problems.push({
          line,
          message:
            "neither a trajectory group (no `trajectories`) nor a trajectory (no `messages_and_choices`)",
        });
      }
    } catch (error) {
      problems.push({ line, message: errorMessage(error) });
    }
  });
  for (const [key, trajectories] of byKey) {
    const metadata = key === "" ? {} : { [groupBy]: JSON.parse(key) };
    groups.push(new TrajectoryGroup(trajectories, { metadata }));
  }
  return { groups, problems, lines };
}

/** What training would make of the groups: counts and the spread of rewards. */
export interface GroupsSummary {
  groups: number;
  trajectories: number;
  exceptions: number;
  rewards: { mean: number; std: number; min: number; max: number } | null;
  /** Groups whose rewards differ: the ones RL learns from. */
  groupsWithSpread: number;
  /** Groups whose rewards are all equal (or of one trajectory): no advantage, nothing learnt. */
  groupsWithoutSpread: number;
  /** Sampled turns (Choices) with logprobs: what RL trains. */
  trainableChoices: number;
  /** Choices without logprobs: the service cannot train them. */
  choicesWithoutLogprobs: number;
  /** Plain messages (prompts, tool results, unfinished turns): context only. */
  messages: number;
}

export function summarize(groups: readonly TrajectoryGroup[]): GroupsSummary {
  const rewards: number[] = [];
  const s: GroupsSummary = {
    groups: groups.length,
    trajectories: 0,
    exceptions: 0,
    rewards: null,
    groupsWithSpread: 0,
    groupsWithoutSpread: 0,
    trainableChoices: 0,
    choicesWithoutLogprobs: 0,
    messages: 0,
  };
  for (const g of groups) {
    s.exceptions += g.exceptions.length;
    const rs = g.trajectories.map((t) => t.reward);
    if (rs.length > 1 && Math.max(...rs) > Math.min(...rs)) s.groupsWithSpread += 1;
    else s.groupsWithoutSpread += 1;
    for (const t of g.trajectories) {
      s.trajectories += 1;
      rewards.push(t.reward);
      const items = [
        ...t.messages_and_choices,
        ...t.additional_histories.flatMap((h) => h.messages_and_choices),
      ];
      for (const item of items) {
        if (isChoice(item)) {
          const logprobs = (item as { logprobs?: { content?: unknown[] | null } | null }).logprobs;
          if (logprobs?.content?.length) s.trainableChoices += 1;
          else s.choicesWithoutLogprobs += 1;
        } else s.messages += 1;
      }
    }
  }
  if (rewards.length > 0) {
    const mean = rewards.reduce((a, b) => a + b, 0) / rewards.length;
    const std = Math.sqrt(rewards.reduce((a, b) => a + (b - mean) ** 2, 0) / rewards.length);
    s.rewards = { mean, std, min: Math.min(...rewards), max: Math.max(...rewards) };
  }
  return s;
}
