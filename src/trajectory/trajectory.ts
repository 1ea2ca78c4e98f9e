import { copyJson } from "../util/copy-json.js";
import { type TrajectoryWire, TrajectoryWireSchema } from "../wire/index.js";
import { unwrapArtJson } from "./art-payload.js";
import { compactItems } from "./compact-logprobs.js";
import { TrajectoryValidationError } from "./errors.js";
import { History } from "./history.js";
import { checkInit } from "./init-check.js";
import type { MessageOrChoice, MessageParam, ToolParam } from "./messages.js";
import { itemsJson, toChatMessages } from "./messages.js";
import { extraKeys, parseWire } from "./parse.js";

// `start_time` is left out on purpose: ART never dumps it, so it is only
// written back when it came in (kept with the unknown keys).
const TRAJECTORY_FIELDS = {
  messages_and_choices: "array",
  tools: "array or null",
  additional_histories: "array",
  reward: "number",
  initial_policy_version: "number or null",
  final_policy_version: "number or null",
  metrics: "object",
  metadata: "object",
  logs: "array",
  start_time: "Date",
} as const;

const KNOWN = [
  "messages_and_choices",
  "tools",
  "additional_histories",
  "reward",
  "initial_policy_version",
  "final_policy_version",
  "metrics",
  "metadata",
  "logs",
] as const;

/** A metric value: ART accepts numbers and booleans only. */
export type MetricValue = number | boolean;

/** What a Trajectory is made from; every field is optional and takes ART's default. */
export interface TrajectoryInit {
  messages_and_choices?: MessageOrChoice[];
  tools?: ToolParam[] | null;
  additional_histories?: History[];
  reward?: number;
  initial_policy_version?: number | null;
  final_policy_version?: number | null;
  metrics?: Record<string, MetricValue>;
  metadata?: Record<string, unknown>;
  logs?: string[];
  start_time?: Date;
}

/**
 * One rollout: the conversation as the model saw it (plain messages for what
 * was sent, OpenAI `Choice` objects for what the model sampled), the tools, any
 * additional histories, and its reward, metrics, metadata and logs. The fields
 * are those of ART's `Trajectory`, with the same names and defaults.
 *
 * @example
 * const t = new Trajectory({ messages_and_choices: [{ role: "user", content: "2+2?" }, completion.choices[0]] });
 * t.reward = 1;
 * t.metrics.turns = 1;
 * t.log("answered in one turn");
 * JSON.stringify(t); // ART's wire JSON
 */
export class Trajectory {
  messages_and_choices: MessageOrChoice[];
  tools: ToolParam[] | null;
  additional_histories: History[];
  reward: number;
  initial_policy_version: number | null;
  final_policy_version: number | null;
  metrics: Record<string, MetricValue>;
  metadata: Record<string, unknown>;
  logs: string[];
  /** When the rollout started; used by `finish()`, never sent (as in ART). */
  start_time: Date;
  #extra: Record<string, unknown> | undefined;

  constructor(init: TrajectoryInit = {}) {
    checkInit("new Trajectory(init)", init, TRAJECTORY_FIELDS);
    this.messages_and_choices = init.messages_and_choices ?? [];
    this.tools = init.tools ?? null;
    this.additional_histories = init.additional_histories ?? [];
    this.reward = init.reward ?? 0;
    this.initial_policy_version = init.initial_policy_version ?? null;
    this.final_policy_version = init.final_policy_version ?? null;
    this.metrics = init.metrics ?? {};
    this.metadata = init.metadata ?? {};
    this.logs = init.logs ?? [];
    this.start_time = init.start_time ?? new Date();
  }

  /** Appends a free-form debug line to `logs`. */
  log(message: string): void {
    this.logs.push(message);
  }

  /** Sets `metrics.duration` to the seconds since `start_time`, as ART's `finish()`. */
  finish(now: Date = new Date()): void {
    this.metrics.duration = (now.getTime() - this.start_time.getTime()) / 1000;
  }

  /**
   * The main conversation as plain chat messages: each Choice becomes
   * `{ role: "assistant", content, tool_calls? }`, as ART's `messages()`.
   *
   * @example
   * const line = JSON.stringify({ messages: t.messages(), tools: t.tools ?? undefined });
   */
  messages(): MessageParam[] {
    return toChatMessages(this.messages_and_choices);
  }

  /**
   * ART's `model_dump(mode="json")`: every field in ART's order, then any
   * unknown keys read in. Everything in it is the caller's own, except when
   * JSON.stringify asks (it passes `key`): then recorded tokens' bytes arrays
   * are shared, frozen ones, which is what lets a group stringify at close to
   * the cost of its wire JSON.
   */
  toJSON(key?: unknown): TrajectoryWire {
    return {
      messages_and_choices: itemsJson(this.messages_and_choices, typeof key === "string"),
      tools: copyJson(this.tools, "tools"),
      additional_histories: this.additional_histories.map((h) => h.toJSON(key)),
      reward: this.reward,
      initial_policy_version: this.initial_policy_version,
      final_policy_version: this.final_policy_version,
      metrics: { ...this.metrics },
      metadata: copyJson(this.metadata, "metadata"),
      logs: [...this.logs],
      ...copyJson(this.#extra),
    } as TrajectoryWire;
  }

  /**
   * @internal The fields of {@link toJSON}, in its order, as they are in
   * memory (nothing copied, Choices not converted): for the wire writer,
   * which converts and writes them one at a time.
   */
  wireShell(): Record<string, unknown> {
    return {
      messages_and_choices: this.messages_and_choices,
      tools: this.tools,
      additional_histories: this.additional_histories,
      reward: this.reward,
      initial_policy_version: this.initial_policy_version,
      final_policy_version: this.final_policy_version,
      metrics: this.metrics,
      metadata: this.metadata,
      logs: this.logs,
      ...this.#extra,
    };
  }

  /**
   * Reads a Trajectory from ART's JSON (an object or a string). Missing keys
   * take ART's defaults; unknown keys are kept and written back by `toJSON()`.
   *
   * @throws TrajectoryValidationError naming the bad field, e.g. `reward: Invalid input: expected number`.
   * @example
   * const t = Trajectory.fromJSON(await readFile("t.json", "utf8"));
   */
  static fromJSON(input: unknown): Trajectory {
    const json = unwrapArtJson(input, "trajectory", "trajectory");
    const parsed = parseWire(TrajectoryWireSchema, json, "trajectory");
    if (parsed.start_time && !parsePythonDatetime(parsed.start_time))
      throw new TrajectoryValidationError("trajectory", [
        {
          code: "custom",
          path: ["start_time"],
          message: `expected a date and time as ISO 8601 (as Python's isoformat writes it), received ${JSON.stringify(parsed.start_time.slice(0, 40))}`,
          input: parsed.start_time,
        },
      ]);
    return Trajectory.fromValid(typeof json === "string" ? JSON.parse(json) : json, parsed);
  }

  /** @internal Builds from input already validated; `parsed` carries the defaults. */
  static fromValid(raw: Record<string, unknown>, parsed: TrajectoryWire): Trajectory {
    const rawHistories = (raw.additional_histories ?? []) as Record<string, unknown>[];
    const t = new Trajectory({
      messages_and_choices: compactItems(
        copyJson((raw.messages_and_choices ?? []) as MessageOrChoice[]),
      ),
      tools: copyJson((raw.tools ?? null) as ToolParam[] | null),
      additional_histories: rawHistories.map((h) => History.fromValid(h)),
      reward: parsed.reward,
      initial_policy_version: parsed.initial_policy_version,
      final_policy_version: parsed.final_policy_version,
      metrics: { ...parsed.metrics },
      metadata: copyJson(raw.metadata ?? {}) as Record<string, unknown>,
      logs: [...parsed.logs],
      start_time: parsed.start_time ? parsePythonDatetime(parsed.start_time) : undefined,
    });
    t.#extra = copyJson(extraKeys(raw, KNOWN));
    return t;
  }
}

// Python's isoformat may carry microseconds and no zone (naive local time);
// JavaScript's Date wants at most milliseconds.
function parsePythonDatetime(value: string): Date | undefined {
  const date = new Date(value.replace(/(\.\d{3})\d+/, "$1"));
  return Number.isNaN(date.getTime()) ? undefined : date;
}
