// JSONL files of trajectory groups, trajectories or SFT lines, as `log`,
// `train`, `sft`, `validate` and `inspect` read them. A line holding
// `trajectories` is a group; a line holding `messages_and_choices` is one
// trajectory, grouped with the others that share its `metadata[groupBy]`; a
// line holding `messages` is an SFT line (`{messages, tools?}`).
//
// Files are read line by line (never whole), and every step is linear: a file
// of a million trajectories is counted in one pass without a stack to overflow.
import { open } from "node:fs/promises";
import { createInterface } from "node:readline";
import { toSftJsonl } from "../training/index.js";
import { isChoice, Trajectory, TrajectoryGroup } from "../trajectory/index.js";
import { errorMessage } from "../util/error-message.js";
import { UsageError } from "./context.js";

/** One line of a file, as read. */
export type FileLine =
  | { kind: "group"; line: number; group: TrajectoryGroup }
  | { kind: "trajectory"; line: number; key: string; trajectory: Trajectory }
  | { kind: "sft"; line: number; text: string }
  | { kind: "problem"; line: number; message: string };

/** The non-empty lines of `path`, numbered from 1; throws UsageError when it cannot be opened. */
export async function* readLines(path: string): AsyncGenerator<{ line: number; text: string }> {
  // Opened first so a missing file is a usage error before any line is read.
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, "r");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? errorMessage(error);
    throw new UsageError(`the file ${path} could not be read (${code}).`);
  }
  // The stream owns the handle: it closes it when it ends or is destroyed.
  const stream = handle.createReadStream({ encoding: "utf8" });
  const lines = createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY });
  let line = 0;
  try {
    for await (const text of lines) {
      line += 1;
      if (text.trim() !== "") yield { line, text };
    }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? errorMessage(error);
    throw new UsageError(`the file ${path} could not be read (${code}).`);
  } finally {
    lines.close();
    stream.destroy();
  }
}

/** What one line holds, checked; a bad line becomes a problem naming the field. */
export function parseLine(text: string, line: number, groupBy: string): FileLine {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { kind: "problem", line, message: `not JSON (${errorMessage(error)})` };
  }
  try {
    if (value && typeof value === "object" && !Array.isArray(value)) {
      if ("trajectories" in value)
        return { kind: "group", line, group: TrajectoryGroup.fromJSON(value) };
      if ("messages_and_choices" in value) {
        const trajectory = Trajectory.fromJSON(value);
        const key = trajectory.metadata[groupBy];
        return {
          kind: "trajectory",
          line,
          key: key === undefined ? "" : JSON.stringify(key),
          trajectory,
        };
      }
      if ("messages" in value) {
        // The very check `sft` (and `model.trainSft`) runs on its lines.
        toSftJsonl(text);
        return { kind: "sft", line, text };
      }
    }
    return {
      kind: "problem",
      line,
      message:
        "neither a trajectory group (`trajectories`), a trajectory (`messages_and_choices`) nor an SFT line (`messages`)",
    };
  } catch (error) {
    return { kind: "problem", line, message: errorMessage(error).replace(/\bline 1[:.] ?/, "") };
  }
}

export interface GroupsFile {
  groups: TrajectoryGroup[];
  /** SFT lines (`{messages, tools?}`), as written. */
  sft: string[];
  /** Lines that could not be read, each with what is wrong. */
  problems: { line: number; message: string }[];
  /** How many lines held groups, single trajectories and SFT lines. */
  lines: { groups: number; trajectories: number; sft: number };
}

/** Reads `path` whole into groups (for sending); throws UsageError when it cannot be read. */
export async function readGroupsFile(path: string, groupBy = "scenario"): Promise<GroupsFile> {
  const out: GroupsFile = {
    groups: [],
    sft: [],
    problems: [],
    lines: { groups: 0, trajectories: 0, sft: 0 },
  };
  const byKey = new Map<string, Trajectory[]>();
  for await (const { line, text } of readLines(path)) {
    const read = parseLine(text, line, groupBy);
    if (read.kind === "group") {
      out.groups.push(read.group);
      out.lines.groups += 1;
    } else if (read.kind === "trajectory") {
      const list = byKey.get(read.key);
      if (list) list.push(read.trajectory);
      else byKey.set(read.key, [read.trajectory]);
      out.lines.trajectories += 1;
    } else if (read.kind === "sft") {
      out.sft.push(read.text);
      out.lines.sft += 1;
    } else out.problems.push({ line: read.line, message: read.message });
  }
  for (const [key, trajectories] of byKey) {
    const metadata = key === "" ? {} : { [groupBy]: JSON.parse(key) };
    out.groups.push(new TrajectoryGroup(trajectories, { metadata }));
  }
  return out;
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
  /** Groups that hold no trajectory at all (counted apart from the two above) (`{"trajectories":[]}`, or every rollout failed). */
  emptyGroups: number;
  /** Sampled turns (Choices) with logprobs: what RL trains. */
  trainableChoices: number;
  /** Choices without logprobs: the service cannot train them. */
  choicesWithoutLogprobs: number;
  /** Plain messages (prompts, tool results, unfinished turns): context only. */
  messages: number;
  /** SFT lines (`{messages}`): used by `sft`, not by RL. */
  sftLines: number;
}

/**
 * Adds up a summary one group or one trajectory at a time, in constant memory
 * per group key (no list of rewards is kept: the mean and spread are running).
 */
export class SummaryBuilder {
  readonly #s: GroupsSummary = {
    groups: 0,
    trajectories: 0,
    exceptions: 0,
    rewards: null,
    groupsWithSpread: 0,
    groupsWithoutSpread: 0,
    emptyGroups: 0,
    trainableChoices: 0,
    choicesWithoutLogprobs: 0,
    messages: 0,
    sftLines: 0,
  };
  #n = 0;
  #mean = 0;
  #m2 = 0;
  #min = Number.POSITIVE_INFINITY;
  #max = Number.NEGATIVE_INFINITY;
  /** Trajectories grouped by key, as their first reward and whether another differs. */
  readonly #keyed = new Map<string, { first: number; spread: boolean }>();

  addGroup(group: TrajectoryGroup): void {
    this.#s.groups += 1;
    this.#s.exceptions += group.exceptions.length;
    const first = group.trajectories[0]?.reward;
    let spread = false;
    for (const t of group.trajectories) {
      if (t.reward !== first) spread = true;
      this.#addTrajectory(t);
    }
    this.#count(group.trajectories.length, spread);
  }

  /** One trajectory of a group formed by key (lines of single trajectories). */
  addKeyed(key: string, t: Trajectory): void {
    const seen = this.#keyed.get(key);
    if (seen === undefined) this.#keyed.set(key, { first: t.reward, spread: false });
    else if (t.reward !== seen.first) seen.spread = true;
    this.#addTrajectory(t);
  }

  addSftLine(): void {
    this.#s.sftLines += 1;
  }

  #count(size: number, spread: boolean): void {
    if (size === 0) this.#s.emptyGroups += 1;
    else if (spread) this.#s.groupsWithSpread += 1;
    else this.#s.groupsWithoutSpread += 1;
  }

  #addTrajectory(t: Trajectory): void {
    this.#s.trajectories += 1;
    const r = t.reward;
    this.#n += 1;
    const delta = r - this.#mean;
    this.#mean += delta / this.#n;
    this.#m2 += delta * (r - this.#mean);
    if (r < this.#min) this.#min = r;
    if (r > this.#max) this.#max = r;
    this.#items(t.messages_and_choices);
    for (const h of t.additional_histories) this.#items(h.messages_and_choices);
  }

  #items(items: Trajectory["messages_and_choices"]): void {
    for (const item of items) {
      if (isChoice(item)) {
        const logprobs = (item as { logprobs?: { content?: unknown[] | null } | null }).logprobs;
        if (logprobs?.content?.length) this.#s.trainableChoices += 1;
        else this.#s.choicesWithoutLogprobs += 1;
      } else this.#s.messages += 1;
    }
  }

  result(): GroupsSummary {
    const s: GroupsSummary = { ...this.#s };
    for (const { spread } of this.#keyed.values()) {
      s.groups += 1;
      if (spread) s.groupsWithSpread += 1;
      else s.groupsWithoutSpread += 1;
    }
    if (this.#n > 0) {
      s.rewards = {
        mean: this.#mean,
        std: Math.sqrt(this.#m2 / this.#n),
        min: this.#min,
        max: this.#max,
      };
    }
    return s;
  }
}

export function summarize(groups: readonly TrajectoryGroup[]): GroupsSummary {
  const b = new SummaryBuilder();
  for (const g of groups) b.addGroup(g);
  return b.result();
}
