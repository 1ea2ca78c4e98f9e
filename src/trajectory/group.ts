import { InvalidArgumentError, isObjectLike } from "../util/argument-error.js";
import { keepClassName } from "../util/class-name.js";
import { copyJson } from "../util/copy-json.js";
import {
  type ExceptionWire,
  type ExceptionWireInput,
  type MetricValue,
  TrajectoryGroupJsonSchema,
  type TrajectoryGroupParam,
  type TrajectoryGroupWire,
  type TrajectoryGroupWireInput,
} from "../wire/index.js";
import { unwrapArtJson } from "./art-payload.js";
import { exceptionToWire, textOf } from "./exception.js";
import { extraKeys, parseWire } from "./parse.js";
import { readWrittenTrajectory, Trajectory, trajectoryFromValid } from "./trajectory.js";

let readWritten: (raw: Record<string, unknown>) => TrajectoryGroup;
let shell: (g: TrajectoryGroup) => Record<string, unknown>;

/** The fields of `toJSON()` as they are in memory, for the wire writer. */
export function groupShell(g: TrajectoryGroup): Record<string, unknown> {
  return shell(g);
}

const KNOWN = ["trajectories", "exceptions", "metadata", "metrics", "logs"] as const;

/** A rollout: a trajectory, a promise of one, or a function that starts one (so it can be scheduled). */
export type Rollout =
  | Trajectory
  | PromiseLike<Trajectory>
  | (() => Trajectory | PromiseLike<Trajectory>);

/**
 * What `new TrajectoryGroup({...})` takes: the trajectories (an `Error` among
 * them becomes an exception record) and the group's other fields.
 *
 * @example
 * new TrajectoryGroup({ trajectories: [t1, t2], metadata: { scenario: "q42" } });
 */
export interface TrajectoryGroupInit extends TrajectoryGroupOptions {
  /** The group's trajectories; an `Error` among them is recorded in `exceptions`. */
  trajectories?: Iterable<Trajectory | Error>;
}

/** A group's fields other than its trajectories (`exceptions`, `metadata`, `metrics`, `logs`). */
export interface TrajectoryGroupOptions {
  /** Failed rollouts: errors (converted as ART does) or ready records. */
  exceptions?: Iterable<unknown>;
  /** Facts about the scenario (scalars), e.g. `{ scenario: "q42" }`. */
  metadata?: Record<string, unknown>;
  /** Numbers about the group, averaged into the step's metrics. */
  metrics?: Record<string, TrajectoryGroup.MetricValue>;
  /** Free-form log lines. */
  logs?: string[];
}

/**
 * Trajectories of the same scenario, scored against each other: training
 * learns from the differences between their rewards. Failed rollouts are kept
 * as `exceptions` records (`{type, message, traceback}`), as ART does.
 *
 * @example
 * const group = new TrajectoryGroup({ trajectories: [t1, t2, t3], metadata: { scenario: "q42" } });
 * // or from rollouts still running; failures become group.exceptions:
 * const group2 = await TrajectoryGroup.from([rollout(), rollout(), rollout()]);
 */
export class TrajectoryGroup {
  /** The rollouts that finished. */
  trajectories: Trajectory[];
  /** Rollouts that failed, as ART's `{ type, message, traceback }` records. */
  exceptions: TrajectoryGroup.ExceptionWire[];
  /** Facts about the scenario (scalars). */
  metadata: Record<string, unknown>;
  /** Numbers about the group. */
  metrics: Record<string, TrajectoryGroup.MetricValue>;
  /** Free-form log lines. */
  logs: string[];
  #extra: Record<string, unknown> = {};

  /**
   * A group from its fields, as `new Trajectory({...})` takes its own:
   * `new TrajectoryGroup({ trajectories, metadata })`. An `Error` found among
   * `trajectories` is recorded in `exceptions` instead, as ART's constructor does.
   *
   * The older form `new TrajectoryGroup(items, options)` is still accepted
   * (deprecated, until 0.3).
   */
  constructor(init?: TrajectoryGroupInit);
  /** @deprecated Write `new TrajectoryGroup({ trajectories: items, ...options })`; this form goes in 0.3. */
  constructor(items: Iterable<Trajectory | Error>, options?: TrajectoryGroupOptions);
  constructor(
    first: TrajectoryGroupInit | Iterable<Trajectory | Error> = {},
    second: TrajectoryGroupOptions = {},
  ) {
    const legacy = isIterable(first);
    const call = legacy ? "new TrajectoryGroup(items, options)" : "new TrajectoryGroup(init)";
    if (!legacy && !isObjectLike(first))
      throw new InvalidArgumentError(call, "init", "an object such as { trajectories }", first);
    if (legacy && !isObjectLike(second))
      throw new InvalidArgumentError(call, "options", "an object", second);
    const { trajectories: items = [], ...options } = legacy
      ? { ...second, trajectories: first }
      : (first as TrajectoryGroupInit);
    const argument = legacy ? "items" : "init.trajectories";
    if (!isIterable(items))
      throw new InvalidArgumentError(call, argument, "an iterable of Trajectory or Error", items);
    checkGroupOptions(call, options);
    this.trajectories = [];
    this.exceptions = [];
    for (const item of items) {
      if (item instanceof Trajectory) this.trajectories.push(item);
      else this.exceptions.push(exceptionToWire(item));
    }
    for (const e of options.exceptions ?? []) this.exceptions.push(toExceptionRecord(e));
    this.metadata = options.metadata ?? {};
    this.metrics = options.metrics ?? {};
    this.logs = options.logs ?? [];
  }

  /**
   * A group from rollouts that may still be running or not yet started. The
   * result is a {@link PendingGroup}: await it to run every rollout (each
   * failure becomes an exception record), or hand it to
   * `gatherTrajectoryGroups`, which schedules its rollouts with bounded
   * concurrency and enforces `maxExceptions`.
   *
   * @example
   * const pending = TrajectoryGroup.from(Array.from({ length: 4 }, () => () => rollout(scenario)), { metadata: { scenario: scenario.id } });
   * const group = await pending;
   */
  static from(rollouts: Iterable<Rollout>, options: TrajectoryGroupOptions = {}): PendingGroup {
    if (!isIterable(rollouts))
      throw new InvalidArgumentError(
        "TrajectoryGroup.from(rollouts, options)",
        "rollouts",
        "an iterable of rollouts (trajectories, promises of them or functions starting them)",
        rollouts,
      );
    return new PendingGroup([...rollouts], options);
  }

  /** Appends a free-form line to the group's `logs`. */
  log(message: string): void {
    this.logs.push(message);
  }

  /**
   * ART's `model_dump(mode="json")` of the group, in ART's key order (see
   * `Trajectory.toJSON` for what `key` changes).
   */
  toJSON(key?: unknown): TrajectoryGroup.TrajectoryGroupWire {
    return {
      trajectories: this.trajectories.map((t) => t.toJSON(key)),
      exceptions: copyJson(this.exceptions, "exceptions"),
      metadata: copyJson(this.metadata, "metadata"),
      metrics: { ...this.metrics },
      logs: [...this.logs],
      ...copyJson(this.#extra),
    } as TrajectoryGroup.TrajectoryGroupWire;
  }

  /**
   * Reads a group from ART's JSON (an object or a string), keeping unknown
   * keys. Any field newer ART leaves out because it holds its default
   * (`trajectories`, `exceptions`, `metadata`, ..., and inside each
   * trajectory) reads as that default.
   *
   * @throws TrajectoryValidationError naming the bad field, e.g. `trajectories[1].reward`.
   * @example
   * const group = TrajectoryGroup.fromJSON(JSON.parse(line));
   */
  static fromJSON(input: unknown): TrajectoryGroup {
    // ART's compact_dump() of a group reads as the group it holds; another envelope is refused.
    const json = unwrapArtJson(input, "trajectory_group", "trajectory group");
    const parsed = parseWire(TrajectoryGroupJsonSchema, json, "trajectory group");
    const raw = (typeof json === "string" ? JSON.parse(json) : json) as Record<string, unknown>;
    const rawTrajectories = (raw.trajectories ?? []) as Record<string, unknown>[];
    const group = new TrajectoryGroup(
      rawTrajectories.map((t, i) => trajectoryFromValid(t, parsed.trajectories[i] as never)),
      {
        // Parsed, so that a record missing its (empty) traceback gets ART's "".
        exceptions: copyJson(parsed.exceptions as ExceptionWire[]),
        metadata: copyJson(raw.metadata ?? {}) as Record<string, unknown>,
        metrics: { ...parsed.metrics },
        logs: [...parsed.logs],
      },
    );
    group.#extra = copyJson(extraKeys(raw, KNOWN));
    return group;
  }

  static {
    shell = (g) => ({
      trajectories: g.trajectories,
      exceptions: g.exceptions,
      metadata: g.metadata,
      metrics: g.metrics,
      logs: g.logs,
      ...g.#extra,
    });
    readWritten = (raw) => {
      const group = new TrajectoryGroup(
        ((raw.trajectories ?? []) as Record<string, unknown>[]).map(readWrittenTrajectory),
        {
          exceptions: (raw.exceptions ?? []) as ExceptionWire[],
          metadata: (raw.metadata ?? {}) as Record<string, unknown>,
          metrics: (raw.metrics ?? {}) as Record<string, MetricValue>,
          logs: (raw.logs ?? []) as string[],
        },
      );
      group.#extra = extraKeys(raw, KNOWN);
      return group;
    };
  }
}

/**
 * The types of {@link TrajectoryGroup}'s fields and JSON: the wire shapes,
 * declared beside their schemas in `trajectory-recorder/wire` and re-listed
 * here, and what a request takes as a group.
 */
export declare namespace TrajectoryGroup {
  export type {
    ExceptionWire,
    ExceptionWireInput,
    MetricValue,
    TrajectoryGroupParam,
    TrajectoryGroupWire,
    TrajectoryGroupWireInput,
  };
}

/**
 * A group from wire JSON this library wrote (a GroupCollector's, kept in
 * Redis): read without a second check, its objects taken over rather than
 * copied. Input from elsewhere goes through `TrajectoryGroup.fromJSON`.
 */
export function readWrittenGroup(input: string | Record<string, unknown>): TrajectoryGroup {
  return readWritten(typeof input === "string" ? JSON.parse(input) : input);
}

/**
 * A group whose rollouts have not all finished: a promise of a
 * {@link TrajectoryGroup} that also exposes its rollouts, so that
 * `gatherTrajectoryGroups` can schedule them one by one.
 */
export class PendingGroup implements PromiseLike<TrajectoryGroup> {
  #promise: Promise<TrajectoryGroup> | undefined;

  constructor(
    /** The rollouts, in order. */
    readonly rollouts: readonly Rollout[],
    /** Group-level fields for the finished group. */
    readonly options: TrajectoryGroupOptions = {},
  ) {
    const call = "new PendingGroup(rollouts, options)";
    if (!Array.isArray(rollouts))
      throw new InvalidArgumentError(call, "rollouts", "an array of rollouts", rollouts);
    checkGroupOptions(call, options);
  }

  /**
   * Runs the rollouts (on the first `await`, not before) and resolves with the
   * finished group, failed rollouts in its `exceptions`.
   */
  // Lazily, so that gather can run the rollouts itself.
  // biome-ignore lint/suspicious/noThenProperty: a pending group is meant to be awaited.
  then<A = TrajectoryGroup, B = never>(
    onfulfilled?: ((value: TrajectoryGroup) => A | PromiseLike<A>) | null,
    onrejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): PromiseLike<A | B> {
    this.#promise ??= Promise.allSettled(this.rollouts.map(runRollout)).then(
      (results) => new TrajectoryGroup(results.map(settledItem), this.options),
    );
    return this.#promise.then(onfulfilled, onrejected);
  }
}

/** Starts a rollout (calling it if it is a function) and checks it gave a Trajectory. */
export async function runRollout(rollout: Rollout): Promise<Trajectory> {
  const value = await (typeof rollout === "function" ? rollout() : rollout);
  if (!(value instanceof Trajectory)) {
    throw new InvalidArgumentError(
      "gatherTrajectories",
      "rollout",
      "",
      undefined,
      `a rollout must resolve to a Trajectory, but it resolved to ${describe(value)}`,
    );
  }
  return value;
}

function settledItem(result: PromiseSettledResult<Trajectory>): Trajectory | Error {
  if (result.status === "fulfilled") return result.value;
  return result.reason instanceof Error ? result.reason : new Error(String(result.reason));
}

function toExceptionRecord(e: unknown): ExceptionWire {
  if (e instanceof Error) return exceptionToWire(e);
  if (e && typeof e === "object" && "type" in e && "message" in e) {
    const r = e as ExceptionWire;
    return {
      type: textOf(r.type),
      message: textOf(r.message),
      traceback: textOf(r.traceback ?? ""),
    };
  }
  return exceptionToWire(e);
}

function isIterable(value: unknown): value is Iterable<unknown> {
  return typeof (value as { [Symbol.iterator]?: unknown } | null)?.[Symbol.iterator] === "function";
}

// Checked where the group is made, not where a bad field would trip later (in toJSON, in a send).
function checkGroupOptions(
  call: string,
  options: unknown,
): asserts options is TrajectoryGroupOptions {
  if (!isObjectLike(options)) throw new InvalidArgumentError(call, "options", "an object", options);
  const { exceptions, metadata, metrics, logs } = options;
  if (exceptions !== undefined && !isIterable(exceptions))
    throw new InvalidArgumentError(call, "options.exceptions", "an iterable of errors", exceptions);
  for (const [key, value] of [
    ["metadata", metadata],
    ["metrics", metrics],
  ] as const)
    if (value !== undefined && (!isObjectLike(value) || Array.isArray(value)))
      throw new InvalidArgumentError(call, `options.${key}`, "a plain object", value);
  if (logs !== undefined && !(Array.isArray(logs) && logs.every((l) => typeof l === "string")))
    throw new InvalidArgumentError(call, "options.logs", "an array of strings", logs);
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (typeof value === "object") return `an object of class ${value.constructor?.name ?? "Object"}`;
  return typeof value;
}

// The build renames this class (it refers to itself); see class-name.ts.
keepClassName(TrajectoryGroup, "TrajectoryGroup");
