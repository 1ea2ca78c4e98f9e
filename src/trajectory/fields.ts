// A Trajectory's fields, once: each with ART's name and default, what its
// constructor accepts, how `toJSON()` writes it and how it is read back from
// wire JSON. The class, `toJSON()`, the wire writer's shell, `fromJSON` and
// the read of a worker's result all derive from this list, in this order
// (ART's `model_dump` order). Adding a field: one entry here, plus its wire
// schema (`TrajectoryWireSchema` in src/wire/trajectory.ts).

import { compactItems } from "../logprobs/index.js";
import { copyJson } from "../util/copy-json.js";
import { type MetricValue, sameType } from "../wire/index.js";
import { type History, historyFromValid } from "./history.js";
import type { FieldKind } from "./init-check.js";
import { itemsJson, type MessageOrChoice, type ToolParam } from "./messages.js";

export type { MetricValue };

/**
 * How JSON is read: `"checked"` from a caller's input (checked by the wire
 * schema first, then copied: the caller keeps theirs); `"written"` from JSON
 * this library wrote and just parsed (taken over as it is, nothing copied or
 * converted).
 */
export type ReadMode = "checked" | "written";

interface Field<V> {
  /** What the constructor accepts for it. */
  init: FieldKind;
  /** ART's default. */
  default: () => V;
  /** Its `toJSON()` value; `forStringify` when JSON.stringify asks (see `Trajectory.toJSON`). */
  json: (value: V, forStringify: boolean, key: unknown) => unknown;
  /** Its value read from wire JSON (`undefined` when the key is absent: the default). */
  read: (raw: unknown, mode: ReadMode) => V;
}

const field = <V>(f: Field<V>) => f;
const same = <V>(value: V) => value;

export const TRAJECTORY_FIELDS = {
  messages_and_choices: field<MessageOrChoice[]>({
    init: "array",
    default: () => [],
    json: (items, forStringify) => itemsJson(items, forStringify),
    read: (raw, mode) =>
      raw === undefined
        ? []
        : mode === "written"
          ? (raw as MessageOrChoice[])
          : compactItems(copyJson(raw as MessageOrChoice[])),
  }),
  tools: field<ToolParam[] | null>({
    init: "array or null",
    default: () => null,
    json: (tools) => copyJson(tools, "tools"),
    read: (raw, mode) =>
      raw === undefined || raw === null
        ? null
        : mode === "written"
          ? (raw as ToolParam[])
          : copyJson(raw as ToolParam[]),
  }),
  additional_histories: field<History[]>({
    init: "array",
    default: () => [],
    json: (histories, _, key) => histories.map((h) => h.toJSON(key)),
    read: (raw, mode) =>
      ((raw ?? []) as Record<string, unknown>[]).map((h) => historyFromValid(h, mode)),
  }),
  reward: field<number>({
    init: "number",
    default: () => 0,
    json: same,
    read: (raw) => (raw ?? 0) as number,
  }),
  initial_policy_version: field<number | null>({
    init: "number or null",
    default: () => null,
    json: same,
    read: (raw) => (raw ?? null) as number | null,
  }),
  final_policy_version: field<number | null>({
    init: "number or null",
    default: () => null,
    json: same,
    read: (raw) => (raw ?? null) as number | null,
  }),
  metrics: field<Record<string, MetricValue>>({
    init: "object",
    default: () => ({}),
    json: (metrics) => ({ ...metrics }),
    read: (raw, mode) => {
      const metrics = (raw ?? {}) as Record<string, MetricValue>;
      return mode === "written" ? metrics : { ...metrics };
    },
  }),
  metadata: field<Record<string, unknown>>({
    init: "object",
    default: () => ({}),
    json: (metadata) => copyJson(metadata, "metadata"),
    read: (raw, mode) => {
      const metadata = (raw ?? {}) as Record<string, unknown>;
      return mode === "written" ? metadata : copyJson(metadata);
    },
  }),
  logs: field<string[]>({
    init: "array",
    default: () => [],
    json: (logs) => [...logs],
    read: (raw, mode) => {
      const logs = (raw ?? []) as string[];
      return mode === "written" ? logs : [...logs];
    },
  }),
};

type Fields = typeof TRAJECTORY_FIELDS;

/**
 * A Trajectory's wire fields as they are in memory (the class's own fields),
 * written out from `TRAJECTORY_FIELDS` above, and checked against it below.
 */
export interface TrajectoryFields {
  /** The conversation: messages the model saw, and the Choices it sampled. Default `[]`. */
  messages_and_choices: MessageOrChoice[];
  /** The tools offered to the model. Default `null`. */
  tools: ToolParam[] | null;
  /** Extra conversations (a sub-agent, a judge), trained with this reward. Default `[]`. */
  additional_histories: History[];
  /** The trajectory's reward. Default `0`. */
  reward: number;
  /** The policy version (checkpoint step) the rollout started with. Default `null`. */
  initial_policy_version: number | null;
  /** The policy version it ended with. Default `null`. */
  final_policy_version: number | null;
  /** Numbers and flags about the rollout (ART takes numbers and booleans only). Default `{}`. */
  metrics: Record<string, number | boolean>;
  /** Facts about the rollout. Default `{}`. */
  metadata: Record<string, unknown>;
  /** Free-form log lines. Default `[]`. */
  logs: string[];
}
// The fields' values as `TRAJECTORY_FIELDS` declares them: the very same.
type FieldValues = { [K in keyof Fields]: Fields[K] extends Field<infer V> ? V : never };
sameType<TrajectoryFields, FieldValues>(true);

/** The wire keys, in ART's order. */
export const TRAJECTORY_KEYS = Object.keys(TRAJECTORY_FIELDS) as (keyof Fields)[];

// What the constructor accepts: the wire fields, and `start_time`, which ART
// never dumps (it is written back only when it came in, with the unknown keys).
export const TRAJECTORY_INIT_KINDS = {
  ...Object.fromEntries(TRAJECTORY_KEYS.map((k) => [k, TRAJECTORY_FIELDS[k].init])),
  start_time: "Date",
} as Record<string, FieldKind>;
