import { keepClassName } from "../util/class-name.js";
import { copyJson } from "../util/copy-json.js";
import {
  type AssistantMessageWire,
  type ChoiceWire,
  type ChoiceWireInput,
  type DeveloperMessageWire,
  type FunctionMessageWire,
  type HistoryWire,
  type HistoryWireInput,
  type MessageOrChoiceWire,
  type MessageOrChoiceWireInput,
  type MessageWire,
  type MessageWireInput,
  type SystemMessageWire,
  type TokenLogprobWire,
  type TokenLogprobWireInput,
  type ToolCallWire,
  type ToolCallWireInput,
  type ToolMessageWire,
  type ToolWire,
  type ToolWireInput,
  type TrajectoryWire,
  type TrajectoryWireInput,
  TrajectoryWireSchema,
  type UserMessageWire,
} from "../wire/index.js";
import { unwrapArtJson } from "./art-payload.js";
import {
  type ReadMode,
  TRAJECTORY_FIELDS,
  TRAJECTORY_INIT_KINDS,
  TRAJECTORY_KEYS,
  type TrajectoryFields,
} from "./fields.js";
import { INFRA_FAILURE_KEY, type InfraFailureKind, infraFailureOf } from "./infra-failure.js";
import { checkInit } from "./init-check.js";
import type { MessageParam } from "./messages.js";
import { toChatMessages } from "./messages.js";
import { extraKeys, parseWire } from "./parse.js";
import { checkStartTime, parsePythonDatetime } from "./start-time.js";

let readWritten: (raw: Record<string, unknown>) => Trajectory;

/**
 * A trajectory from wire JSON this library wrote and just parsed (a
 * RolloutWorker's result): read without a second check, its objects taken
 * over rather than copied. Input from elsewhere goes through
 * `Trajectory.fromJSON`, which checks it.
 */
export function readWrittenTrajectory(raw: Record<string, unknown>): Trajectory {
  return readWritten(raw);
}

let readChecked: (raw: Record<string, unknown>, parsed: TrajectoryWire) => Trajectory;
let shell: (t: Trajectory) => Record<string, unknown>;

/**
 * A trajectory from JSON already validated (`parsed` is what the schema made
 * of `raw`, with its defaults); `raw` is copied. Kept off the class so the
 * public type carries no internal members.
 */
export function trajectoryFromValid(
  raw: Record<string, unknown>,
  parsed: TrajectoryWire,
): Trajectory {
  return readChecked(raw, parsed);
}

/**
 * The fields of `toJSON()`, in its order, as they are in memory (nothing
 * copied, Choices not converted): for the wire writer, which converts and
 * writes them one at a time.
 */
export function trajectoryShell(t: Trajectory): Record<string, unknown> {
  return shell(t);
}

/** What a Trajectory is made from; every field is optional and takes ART's default. */
export interface TrajectoryInit extends Partial<Trajectory.TrajectoryFields> {
  /** When the rollout began. Default: now. */
  start_time?: Date;
}

/**
 * A Trajectory's wire fields (`messages_and_choices`, `tools`,
 * `additional_histories`, `reward`, `initial_policy_version`,
 * `final_policy_version`, `metrics`, `metadata`, `logs`), declared once in
 * `src/trajectory/fields.ts`, with ART's names, order and defaults.
 */
export interface Trajectory extends Trajectory.TrajectoryFields {}

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
// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: see the interface above.
export class Trajectory {
  /** When the rollout started; used by `finish()`, never sent (as in ART). */
  start_time: Date;
  #extra: Record<string, unknown> | undefined;

  constructor(init: TrajectoryInit = {}) {
    checkInit("new Trajectory(init)", init, TRAJECTORY_INIT_KINDS);
    const fields = this as Record<string, unknown>;
    const given = init as Record<string, unknown>;
    for (const k of TRAJECTORY_KEYS) fields[k] = given[k] ?? TRAJECTORY_FIELDS[k].default();
    this.start_time = init.start_time ?? new Date();
  }

  /** Appends a free-form debug line to `logs`. */
  log(message: string): void {
    this.logs.push(message);
  }

  /**
   * Marks this rollout as an infrastructure failure (`metadata.infra_failure`
   * set to `kind`, a line in `logs`): it failed for a reason outside the
   * policy, such as a crashed tool runner, so it is left out of its group's
   * mean and standard deviation and out of training, and counted per step,
   * rather than scored as a zero. The recorder marks upstream 5xx answers,
   * transport errors, timeouts and cut streams by itself.
   *
   * @example
   * try { result = await runTool(call); } catch (e) { t.markInfraFailure("tool_runner", String(e)); }
   */
  markInfraFailure(
    kind: Trajectory.InfraFailureKind | (string & {}) = "manual",
    detail?: string,
  ): void {
    const value = typeof kind === "string" && kind !== "" ? kind : "manual";
    this.metadata[INFRA_FAILURE_KEY] = value;
    this.log(
      `infrastructure failure (${value})${detail ? `: ${detail}` : ""}: marked metadata.${INFRA_FAILURE_KEY}, left out of its group's statistics and of training`,
    );
  }

  /**
   * Says this rollout is no infrastructure failure (`metadata.infra_failure`
   * set to `false`): a mark is removed, and the recorder marks it no more,
   * so it counts in its group's statistics and training as any other. Called
   * when a rollout starts, it is the rollout's opt-out.
   *
   * @example
   * await recorder.rollout(async (t) => { t.clearInfraFailure(); await agent(t); });
   */
  clearInfraFailure(): void {
    const was = infraFailureOf(this);
    this.metadata[INFRA_FAILURE_KEY] = false;
    if (was !== undefined)
      this.log(
        `infrastructure failure (${was}) cleared by the application: counted as any rollout`,
      );
  }

  /** The kind of infrastructure failure this rollout is marked with, or `undefined` (see {@link markInfraFailure}). */
  get infraFailure(): string | undefined {
    return infraFailureOf(this);
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
  toJSON(key?: unknown): Trajectory.TrajectoryWire {
    const out: Record<string, unknown> = {};
    const forStringify = typeof key === "string";
    for (const k of TRAJECTORY_KEYS) {
      const f = TRAJECTORY_FIELDS[k] as { json: (v: unknown, s: boolean, key: unknown) => unknown };
      out[k] = f.json(this[k], forStringify, key);
    }
    return Object.assign(out, copyJson(this.#extra)) as Trajectory.TrajectoryWire;
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
    if (parsed.start_time) checkStartTime(parsed.start_time);
    return Trajectory.#read(
      typeof json === "string" ? JSON.parse(json) : json,
      "checked",
      parsed.start_time,
    );
  }

  static {
    readWritten = (raw) => Trajectory.#read(raw, "written", raw.start_time);
    readChecked = (raw, parsed) => Trajectory.#read(raw, "checked", parsed.start_time);
    shell = (t) => {
      const out: Record<string, unknown> = {};
      for (const k of TRAJECTORY_KEYS) out[k] = t[k];
      return Object.assign(out, t.#extra);
    };
  }

  static #read(raw: Record<string, unknown>, mode: ReadMode, startTime: unknown): Trajectory {
    const init: Record<string, unknown> = {};
    for (const k of TRAJECTORY_KEYS) init[k] = TRAJECTORY_FIELDS[k].read(raw[k], mode);
    const t = new Trajectory({
      ...(init as Partial<TrajectoryFields>),
      start_time: typeof startTime === "string" ? parsePythonDatetime(startTime) : undefined,
    });
    const extra = extraKeys(raw, TRAJECTORY_KEYS);
    t.#extra = mode === "written" ? extra : copyJson(extra);
    return t;
  }
}

/**
 * The trajectory's JSON as ART serializes it and `toJSON()` returns it, and as
 * requests take it (`...WireInput`). Each is declared once, beside its zod
 * schema in `trajectory-recorder/wire`, and re-listed here where a user of the
 * class reaches it.
 */
export declare namespace Trajectory {
  export type {
    AssistantMessageWire,
    ChoiceWire,
    ChoiceWireInput,
    DeveloperMessageWire,
    FunctionMessageWire,
    HistoryWire,
    HistoryWireInput,
    InfraFailureKind,
    MessageOrChoiceWire,
    MessageOrChoiceWireInput,
    MessageWire,
    MessageWireInput,
    SystemMessageWire,
    TokenLogprobWire,
    TokenLogprobWireInput,
    ToolCallWire,
    ToolCallWireInput,
    ToolMessageWire,
    ToolWire,
    ToolWireInput,
    TrajectoryFields,
    TrajectoryWire,
    TrajectoryWireInput,
    UserMessageWire,
  };
}

// The build renames this class (it refers to itself); see class-name.ts.
keepClassName(Trajectory, "Trajectory");
