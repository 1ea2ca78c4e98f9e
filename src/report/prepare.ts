// The page's data: a light index of every trajectory (reward, advantage,
// length, tools, group, scenario) read when the page opens, and the
// trajectories themselves in chunks the page parses only when it shows one.
// Loops only, no recursion: a run of any size or nesting builds.

import {
  groupTokenSharing,
  hasRewardSignal,
  infraFailureOf,
  SPLIT_LOG,
} from "../trajectory/index.js";
import {
  artTrainingMetrics,
  type MetricStats,
  notTrainedReason,
  trajectoryMetricStats,
} from "./metrics.js";
import {
  groupAdvantages,
  type ReportGroup,
  type ReportRun,
  type ReportTrajectory,
  rewardStats,
} from "./run.js";
import { type PageTokens, pageTokens } from "./tokens.js";

type Json = Record<string, unknown>;
const isObject = (x: unknown): x is Json => !!x && typeof x === "object" && !Array.isArray(x);

/** Trajectories per chunk of the page: one chunk is parsed when one of them is shown. */
export const CHUNK_SIZE = 400;
/** Deeper values are shown as a note: the page and JSON.stringify stay within the stack. */
export const MAX_DEPTH = 48;

/** A message or Choice as the page draws it. */
export interface PageItem {
  /** `c` a Choice (trained when the policy sampled it), `m` a message, `x` not an object. */
  k: "c" | "m" | "x";
  role?: string;
  /** The text, when the content is a string or text parts. */
  text?: string;
  /** The content when it is something else (shown as JSON). */
  rawContent?: unknown;
  reasoning?: string;
  calls?: { id: string; name: string; args: string }[];
  /** `tool_calls` when it is not a list of calls (shown as JSON). */
  rawCalls?: unknown;
  callId?: string;
  name?: string;
  finish?: string;
  tok?: PageTokens;
  /** With `x`: the item itself. */
  raw?: unknown;
}

export interface PageHistory {
  label: string;
  items: PageItem[];
  tools?: string[];
  rawTools?: unknown;
}

/** One trajectory as the page draws it. */
export interface PageTrajectory {
  reward: unknown;
  histories: PageHistory[];
  metadata?: unknown;
  metrics?: unknown;
  logs?: unknown;
  /** The recorder's `token lineage split:` log lines: where a history split, both token windows. */
  splits?: string[];
  /** Fields the report does not draw, shown as JSON. */
  other?: Json;
}

export interface PageGroup {
  /** Index of its step in `steps`. */
  s: number;
  scenario: string;
  signal: boolean;
  /** Whether the trainer learned from it: a `train` group, not marked as left out. */
  trained: boolean;
  /** Why a `train` group was not trained on, when its metadata says so. */
  skip?: string;
  /** Index of its first trajectory, and how many it has. */
  first: number;
  n: number;
  mean: number | null;
  metadata?: unknown;
  exceptions?: unknown;
  logs?: unknown;
}

export interface PageIndex {
  title: string;
  subtitle: string;
  steps: {
    step: number;
    split: string;
    /** The run's label, in a report of several runs. */
    run?: string;
    first: number;
    count: number;
    n: number;
    /** The trajectories' own metrics, summarised (see trajectoryMetricStats). */
    m: Record<string, MetricStats>;
    /** Token lineage splits the recorder made (its `logs`), and prefix tokens histories repeat. */
    splits: number;
    dup: number;
  }[];
  /** The runs' labels, in a report of several runs (else empty). */
  runs: string[];
  groups: PageGroup[];
  toolNames: string[];
  /** Per trajectory, in order: reward, advantage, sampled tokens, turns, tool calls (indices of toolNames). */
  reward: (number | null)[];
  advantage: (number | null)[];
  tokens: number[];
  turns: number[];
  tools: number[][];
  chunkSize: number;
  chunks: number;
  training: NonNullable<ReportRun["training"]>;
  /** Set on a page served live: how often it asks its server for new steps. */
  live?: { interval: number };
}

/**
 * A copy of `value` in which anything nested deeper than `maxDepth` is a
 * note; walked with its own stack, so any depth JSON.parse accepts is fine.
 */
export function capDepth(value: unknown, maxDepth = MAX_DEPTH): unknown {
  if (!value || typeof value !== "object") return value;
  const root: { v?: unknown } = {};
  const stack: { src: unknown; set: (v: unknown) => void; depth: number }[] = [
    { src: value, set: (v) => (root.v = v), depth: 0 },
  ];
  while (stack.length > 0) {
    const { src, set, depth } = stack.pop() as (typeof stack)[number];
    if (!src || typeof src !== "object") {
      set(src);
      continue;
    }
    if (depth >= maxDepth) {
      set(`(nested deeper than ${maxDepth} levels: not shown)`);
      continue;
    }
    if (Array.isArray(src)) {
      const out: unknown[] = new Array(src.length);
      set(out);
      for (let i = 0; i < src.length; i++)
        stack.push({ src: src[i], set: (v) => (out[i] = v), depth: depth + 1 });
    } else {
      const out: Json = {};
      set(out);
      for (const k of Object.keys(src))
        stack.push({ src: (src as Json)[k], set: (v) => (out[k] = v), depth: depth + 1 });
    }
  }
  return root.v;
}

function textOf(content: unknown): { text?: string; rawContent?: unknown } {
  if (content === null || content === undefined) return {};
  if (typeof content === "string") return { text: content };
  if (Array.isArray(content) && content.every((p) => isObject(p) && typeof p.text === "string"))
    return { text: content.map((p) => (p as Json).text as string).join("") };
  return { rawContent: capDepth(content) };
}

const shortJson = (v: unknown) => JSON.stringify(capDepth(v ?? null, 16));

function callsOf(value: unknown): Pick<PageItem, "calls" | "rawCalls"> {
  if (value === null || value === undefined) return {};
  if (!Array.isArray(value) || !value.every(isObject)) return { rawCalls: capDepth(value) };
  return {
    calls: value.map((c) => {
      const f = isObject(c.function) ? c.function : {};
      return {
        id: typeof c.id === "string" ? c.id : "",
        name: typeof f.name === "string" ? f.name : shortJson(f.name),
        args: typeof f.arguments === "string" ? f.arguments : shortJson(f.arguments),
      };
    }),
  };
}

function itemOf(item: unknown): PageItem {
  if (!isObject(item)) return { k: "x", raw: capDepth(item) };
  const choice = "finish_reason" in item && "message" in item;
  const m = choice ? (isObject(item.message) ? item.message : {}) : item;
  const out: PageItem = {
    k: choice ? "c" : "m",
    role: String(m.role ?? (choice ? "assistant" : "?")),
  };
  Object.assign(out, textOf(m.content), callsOf(m.tool_calls));
  const reasoning = m.reasoning_content ?? m.reasoning;
  if (typeof reasoning === "string" && reasoning) out.reasoning = reasoning;
  if (typeof m.tool_call_id === "string") out.callId = m.tool_call_id;
  if (typeof m.name === "string") out.name = m.name;
  if (choice) {
    out.finish = String(item.finish_reason);
    const tok = pageTokens(item.logprobs, out.text ?? null);
    if (tok?.raw !== undefined) tok.raw = capDepth(tok.raw);
    if (tok) out.tok = tok;
  }
  return out;
}

function historyOf(label: string, items: unknown, tools: unknown): PageHistory {
  const h: PageHistory = {
    label,
    items: Array.isArray(items) ? items.map(itemOf) : [{ k: "x", raw: capDepth(items) }],
  };
  if (Array.isArray(tools) && tools.every(isObject))
    h.tools = tools.map((t) => {
      const f = isObject(t.function) ? t.function : t;
      return typeof f.name === "string" ? f.name : "?";
    });
  else if (tools !== null && tools !== undefined) h.rawTools = capDepth(tools);
  return h;
}

const DRAWN = new Set([
  "messages_and_choices",
  "additional_histories",
  "reward",
  "tools",
  "metadata",
  "metrics",
  "logs",
]);

/** Fields left out of "other fields" when they hold ART's default. */
const QUIET: Record<string, unknown> = {
  initial_policy_version: null,
  final_policy_version: null,
};

/** A trajectory in the page's form (its values already depth-capped). */
export function pageTrajectory(t: ReportTrajectory): PageTrajectory {
  const histories = [historyOf("main conversation", t.messages_and_choices, t.tools)];
  const extra = t.additional_histories;
  if (Array.isArray(extra))
    extra.forEach((h, i) => {
      const label = `additional history ${i + 1}`;
      histories.push(
        isObject(h)
          ? historyOf(label, h.messages_and_choices, h.tools ?? t.tools)
          : { label, items: [{ k: "x", raw: capDepth(h) }] },
      );
    });
  const out: PageTrajectory = { reward: t.reward, histories };
  if (t.metadata !== undefined) out.metadata = capDepth(t.metadata);
  if (t.metrics !== undefined) out.metrics = capDepth(t.metrics);
  if (t.logs !== undefined) out.logs = capDepth(t.logs);
  if (Array.isArray(t.logs)) {
    const splits = t.logs.filter(
      (l): l is string => typeof l === "string" && l.startsWith(SPLIT_LOG),
    );
    if (splits.length) out.splits = splits;
  }
  const other: Json = {};
  for (const k of Object.keys(t))
    if (!DRAWN.has(k) && !(k in QUIET && t[k] === QUIET[k])) other[k] = capDepth(t[k]);
  if (extra !== undefined && !Array.isArray(extra)) other.additional_histories = capDepth(extra);
  if (Object.keys(other).length) out.other = other;
  return out;
}

const SCENARIO_KEYS = [
  "scenario",
  "scenario_id",
  "scenario_name",
  "task",
  "task_id",
  "example_id",
  "prompt_id",
  "id",
  "name",
];

/** Metadata the report itself reads: never a group's name. */
const NOT_NAMES = new Set(["checkpoint_step", "left_out", "not_trained", "trained"]);

/** The scenario a group ran, from its own metadata or its trajectories'; else its number. */
export function scenarioOf(group: ReportGroup, index: number): string {
  const gm = isObject(group.metadata) ? group.metadata : {};
  const metas = group.trajectories.map((t) => (isObject(t.metadata) ? t.metadata : {}));
  const scalar = (v: unknown) =>
    typeof v === "string" || (typeof v === "number" && Number.isFinite(v));
  for (const k of SCENARIO_KEYS) {
    if (scalar(gm[k])) return String(gm[k]);
    const v = metas[0]?.[k];
    if (scalar(v) && metas.every((m) => m[k] === v)) return String(v);
  }
  // A metadata value every trajectory of the group shares names it.
  const first = metas[0] ?? {};
  for (const [k, v] of Object.entries(first))
    if (scalar(v) && !NOT_NAMES.has(k) && metas.every((m) => m[k] === v))
      return `${k}=${String(v)}`;
  return `group ${index + 1}`;
}

/** Sampled tokens, assistant turns and tool calls (by name) of every history, read without building the page form. */
function countsOf(t: ReportTrajectory): { tokens: number; turns: number; calls: string[] } {
  let tokens = 0;
  let turns = 0;
  const calls: string[] = [];
  const histories: unknown[] = [t.messages_and_choices];
  if (Array.isArray(t.additional_histories))
    for (const h of t.additional_histories) if (isObject(h)) histories.push(h.messages_and_choices);
  for (const items of histories) {
    if (!Array.isArray(items)) continue;
    for (const item of items) {
      if (!isObject(item)) continue;
      const choice = "finish_reason" in item && "message" in item;
      const m = choice ? (isObject(item.message) ? item.message : {}) : item;
      if (choice || m.role === "assistant") turns += 1;
      if (choice && isObject(item.logprobs) && Array.isArray(item.logprobs.content))
        tokens += item.logprobs.content.length;
      if (Array.isArray(m.tool_calls) && m.tool_calls.every(isObject))
        for (const c of m.tool_calls as Json[]) {
          const f = isObject(c.function) ? c.function : {};
          calls.push(typeof f.name === "string" ? f.name : shortJson(f.name));
        }
    }
  }
  return { tokens, turns, calls };
}

const num = (x: number) => (Number.isFinite(x) ? x : null);

/**
 * The page's index and, one by one, the JSON of each chunk of trajectories.
 * Chunks are produced lazily so a writer can stream them to disk.
 */
export function preparePage(run: ReportRun): { index: PageIndex; chunks: () => Generator<string> } {
  const runs: string[] = [];
  for (const s of run.steps) if (s.run !== undefined && !runs.includes(s.run)) runs.push(s.run);
  const rank = (s: { run?: string }) => (s.run === undefined ? -1 : runs.indexOf(s.run));
  const steps = [...run.steps].sort(
    (a, b) => rank(a) - rank(b) || a.step - b.step || a.split.localeCompare(b.split),
  );
  const index: PageIndex = {
    title: run.title ?? "Trajectory report",
    subtitle: run.subtitle ?? "",
    steps: [],
    runs,
    groups: [],
    toolNames: [],
    reward: [],
    advantage: [],
    tokens: [],
    turns: [],
    tools: [],
    chunkSize: CHUNK_SIZE,
    chunks: 0,
    training: (run.training ?? []).map((t) => ({ ...t, metrics: artTrainingMetrics(t.metrics) })),
  };
  const toolIndex = new Map<string, number>();
  const order: ReportTrajectory[] = [];
  steps.forEach((s, si) => {
    const entry: PageIndex["steps"][number] = {
      step: s.step,
      split: s.split,
      ...(s.run !== undefined ? { run: s.run } : {}),
      first: index.groups.length,
      count: 0,
      n: 0,
      m: trajectoryMetricStats(s.groups.flatMap((g) => g.trajectories)),
      splits: 0,
      dup: 0,
    };
    // Only a train step's groups are trained on; any other split was evaluated.
    const train = s.split === "train";
    s.groups.forEach((g, gi) => {
      const rewards = g.trajectories.map((t) =>
        typeof t.reward === "number" ? t.reward : Number.NaN,
      );
      const adv = train
        ? groupAdvantages(rewards, s.scaleRewards ?? true, s.advantageBalance ?? 0)
        : rewards.map(() => Number.NaN);
      const skip = train ? notTrainedReason(g) : undefined;
      // Infrastructure failures are left out of the group's mean, as train leaves them out.
      const stats = rewardStats(
        rewards.filter(
          (r, k) => Number.isFinite(r) && infraFailureOf(g.trajectories[k]) === undefined,
        ),
      );
      const group: PageGroup = {
        s: si,
        scenario: scenarioOf(g, gi),
        signal: hasRewardSignal(g as unknown as Parameters<typeof hasRewardSignal>[0]),
        trained: train && skip === undefined,
        first: order.length,
        n: g.trajectories.length,
        mean: stats ? num(stats.mean) : null,
      };
      if (skip !== undefined) group.skip = skip;
      if (g.metadata !== undefined) group.metadata = capDepth(g.metadata);
      if (g.exceptions !== undefined && !(Array.isArray(g.exceptions) && g.exceptions.length === 0))
        group.exceptions = capDepth(g.exceptions);
      if (g.logs !== undefined && !(Array.isArray(g.logs) && g.logs.length === 0))
        group.logs = capDepth(g.logs);
      index.groups.push(group);
      g.trajectories.forEach((t, k) => {
        order.push(t);
        index.reward.push(num(rewards[k] as number));
        index.advantage.push(num(adv[k] as number));
        const { tokens, turns, calls: names } = countsOf(t);
        const calls: number[] = [];
        for (const name of names) {
          let at = toolIndex.get(name);
          if (at === undefined) {
            at = index.toolNames.length;
            toolIndex.set(name, at);
            index.toolNames.push(name);
          }
          calls.push(at);
        }
        index.tokens.push(tokens);
        index.turns.push(turns);
        index.tools.push(calls);
      });
      entry.count += 1;
      entry.n += g.trajectories.length;
      const sharing = groupTokenSharing(g.trajectories);
      entry.splits += sharing.splits;
      entry.dup += sharing.duplicatePrefixTokens;
    });
    index.steps.push(entry);
  });
  index.chunks = Math.ceil(order.length / CHUNK_SIZE);
  function* chunks(): Generator<string> {
    for (let c = 0; c < index.chunks; c++) {
      const part: PageTrajectory[] = [];
      for (let i = c * CHUNK_SIZE; i < Math.min(order.length, (c + 1) * CHUNK_SIZE); i++)
        part.push(pageTrajectory(order[i] as ReportTrajectory));
      yield scriptJson(part);
    }
  }
  return { index, chunks };
}

/** JSON that is safe inside a `<script>` element. */
export function scriptJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, "\\u003c")
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");
}
