// The TrainingCoordinator's options: one of two modes the compiler tells
// apart by `sink`: the coordinator trains its own batches (`trainEvery`), or
// hands each group to a sink that trains (a TrajectoryShipper).

import {
  DEFAULT_MAX_STEPS_OFF_POLICY,
  maxStepsOffPolicyProblem,
  type NoSignalPolicy,
  type TrainableModel,
  type TrainConfig,
  type TrainEvery,
  type TrainResult,
} from "../../training/index.js";
import type { GroupSink } from "../../trajectory/index.js";
import { InvalidArgumentError } from "../../util/argument-error.js";
import type { GroupCollectorOptions } from "./collector.js";
import { DEFAULT_RETENTION_MS } from "./retention.js";
import type { StaleMode } from "./store.js";

/** What both modes of {@link TrainingCoordinator} take. */
export interface CoordinatorBaseOptions extends GroupCollectorOptions {
  /**
   * How many steps behind the newest one a group's policy (its oldest
   * trajectory's `initial_policy_version`) may be when its batch is formed
   * (with `sink`: when it is handed over). Older groups are too far
   * off-policy: dropped (logged, counted in `groups.stale` and in the next
   * job's step metric `data/step_num_groups_stale`) or re-run (`onStale`).
   * A group with no version is never dropped. Default:
   * `trainEvery.maxStepsOffPolicy`, else 4, as ART's pipeline trainer;
   * `Infinity` turns it off.
   */
  maxStepsOffPolicy?: number;
  /** @deprecated Use `maxStepsOffPolicy` (this name had no limit by default). */
  maxStaleness?: number;
  /**
   * What happens to a group past `maxStepsOffPolicy`: `"drop"` (counted in
   * `groups.stale` and logged) or `"rerun"`: its rollouts are enqueued again
   * as a new group `<id>.rerun<n>` (counted in `groups.rerun`), at most
   * `maxReruns` times, then dropped. Default `"drop"`.
   */
  onStale?: StaleMode;
  /** Re-runs of one group with `onStale: "rerun"`. Default 1. */
  maxReruns?: number;
  /** Also collect groups in this process. Default true. */
  collect?: boolean;
  /** How often to look for a full batch, and to poll a job's events, in ms. Default 1000. */
  pollIntervalMs?: number;
  /**
   * How long the coordinator's lock lives without renewal, in ms: a
   * coordinator started while another holds it waits; one that died is
   * replaced after this long. Default 30000.
   */
  lockTtlMs?: number;
  /**
   * How long the run's history stays in Redis, in ms: the mark of a group
   * that finished (trained, handed, dropped, released) and the record of a
   * finished batch are deleted this long after they finished; the counters
   * `readProgress` reads, the published step and the coordinator's mode
   * live this long after the last running coordinator refreshed them.
   * Groups still waiting (collected, uncertain, refused, failed jobs) never
   * expire. Keep it longer than a group job may be retried (a collector run
   * again after its mark expired would add the group again). Default
   * 86400000 (a day).
   */
  retentionMs?: number;
}

/** {@link TrainingCoordinator} training its own batches: a job every `trainEvery.groups` groups. */
export interface CoordinatorTrainingOptions extends CoordinatorBaseOptions {
  /** The model trained (a `TrainableModel`). */
  model: Pick<TrainableModel, "train" | "followJob" | "getStep">;
  /**
   * A training job (`model.train`) every `groups` collected groups, with
   * `config`; the same object as the shipper's `trainEvery`. Groups whose
   * rewards are all equal (`noSignal: "skip"`, the default) are released
   * (counted in `groups.noSignal`) and passed to the next job's `train`,
   * which logs them to its step as not trained.
   *
   * A number (with `config` and `noSignal` beside it) is the spelling of
   * 0.1 and is still accepted.
   */
  trainEvery: TrainEvery | number;
  /** @deprecated Use `trainEvery.config`. */
  config?: TrainConfig;
  /** @deprecated Use `trainEvery.noSignal`. */
  noSignal?: NoSignalPolicy;
  /** Called after each training job, with the new step. */
  onTrained?: (result: TrainResult & { batch: number; groups: string[] }) => void;
  sink?: never;
}

/** {@link TrainingCoordinator} handing each collected group to a sink, which trains. */
export interface CoordinatorSinkOptions extends CoordinatorBaseOptions {
  /** The model the sink trains: only its `getStep` is used, to publish the steps it reaches. */
  model: Pick<TrainableModel, "getStep">;
  /**
   * Where collected groups go instead of the coordinator's own training jobs:
   * usually a `TrajectoryShipper` with a `spoolDir` and `trainEvery`, which
   * logs, trains and retries. Each group is handed over at most once, in the
   * order collected; a group whose hand-off a killed coordinator left
   * unconfirmed is reported (logged, counted in `groups.uncertain`, listed by
   * {@link TrainingCoordinator.unhanded}) and never handed again unless you
   * call {@link TrainingCoordinator.handAgain}. The coordinator does not close
   * the sink: close it after the coordinator.
   */
  sink: GroupSink;
  /**
   * A collected group whose rewards are all equal (`hasRewardSignal` is
   * false): `"skip"` (default) releases it (counted in `groups.noSignal`,
   * never handed over); `"send"` hands it over like any other, for the
   * sink's own `trainEvery.noSignal` to decide.
   */
  noSignal?: NoSignalPolicy;
  trainEvery?: never;
  config?: never;
  onTrained?: never;
}

/** Options of {@link TrainingCoordinator}: its own training (`trainEvery`) or a `sink`. */
export type TrainingCoordinatorOptions = CoordinatorTrainingOptions | CoordinatorSinkOptions;

/** The options as the coordinator runs them: defaults filled in, one spelling. */
export interface ResolvedCoordinatorOptions {
  options: TrainingCoordinatorOptions;
  /** Its own training: the options, with `trainEvery` as an object holding `config` and `noSignal`. */
  own?: CoordinatorTrainingOptions & { trainEvery: TrainEvery & { noSignal: NoSignalPolicy } };
  sink?: GroupSink;
  noSignal: NoSignalPolicy;
  onStale: StaleMode;
  /** The staleness limit in steps: `Infinity` for none. */
  maxStepsOffPolicy: number;
  pollMs: number;
  retentionMs: number;
}

/** Checks the options (an InvalidArgumentError naming the field) and fills in defaults. */
export function resolveCoordinatorOptions(
  options: TrainingCoordinatorOptions,
): ResolvedCoordinatorOptions {
  // "options.x must be ...": the first word names the argument.
  const fail = (message: string): never => {
    const argument = message.split(" ", 1)[0] as string;
    const problem = message
      .slice(argument.length + 1)
      .replace(/^must be /, "expected ")
      .replace(/\.$/, "");
    throw new InvalidArgumentError("TrainingCoordinator", argument, "", undefined, problem);
  };
  const o = options as Partial<CoordinatorTrainingOptions> & Partial<CoordinatorSinkOptions>;
  if (!o.model || typeof o.model.getStep !== "function") {
    fail("options.model must be a TrainableModel.");
  }
  checkNoSignal(o.noSignal, "options.noSignal", fail);
  const max = o.maxStaleness;
  if (max !== undefined && !(Number.isInteger(max) && max >= 0)) {
    fail("options.maxStaleness must be an integer, 0 or more.");
  }
  if (maxStepsOffPolicyProblem(o.maxStepsOffPolicy))
    fail(`options.maxStepsOffPolicy must be an integer, 0 or more, or Infinity.`);
  const everyLimit = (o.trainEvery as TrainEvery | undefined)?.maxStepsOffPolicy;
  if (typeof o.trainEvery === "object" && maxStepsOffPolicyProblem(everyLimit))
    fail(`options.trainEvery.maxStepsOffPolicy must be an integer, 0 or more, or Infinity.`);
  if (o.onStale !== undefined && o.onStale !== "drop" && o.onStale !== "rerun") {
    fail(`options.onStale must be "drop" or "rerun", not ${JSON.stringify(o.onStale)}.`);
  }
  const reruns = o.maxReruns;
  if (reruns !== undefined && !(Number.isInteger(reruns) && reruns >= 0)) {
    fail("options.maxReruns must be an integer, 0 or more.");
  }
  const retention = o.retentionMs;
  if (retention !== undefined && !(Number.isInteger(retention) && retention > 0)) {
    fail("options.retentionMs must be a positive integer (milliseconds).");
  }
  const common = {
    options,
    retentionMs: retention ?? DEFAULT_RETENTION_MS,
    onStale: o.onStale ?? "drop",
    maxStepsOffPolicy:
      o.maxStepsOffPolicy ??
      o.maxStaleness ??
      (typeof o.trainEvery === "object" ? everyLimit : undefined) ??
      DEFAULT_MAX_STEPS_OFF_POLICY,
    pollMs: o.pollIntervalMs ?? 1000,
  } as const;
  if (o.sink !== undefined) {
    if (typeof (o.sink as Partial<GroupSink> | null)?.add !== "function") {
      fail(
        "options.sink must be a GroupSink (an object with add(group)), e.g. a TrajectoryShipper.",
      );
    }
    for (const field of ["trainEvery", "config", "onTrained"] as const) {
      if (o[field] !== undefined) {
        fail(
          `options.${field} belongs to the coordinator's own training (model.train); with options.sink the sink trains: give the shipper its trainEvery (and config) instead, and read its stats() for jobs.`,
        );
      }
    }
    return { ...common, sink: o.sink as GroupSink, noSignal: o.noSignal ?? "skip" };
  }
  const raw = o.trainEvery;
  const every: TrainEvery | undefined =
    typeof raw === "number" ? { groups: raw } : raw === undefined || raw === null ? undefined : raw;
  if (!every || typeof every !== "object" || !Number.isInteger(every.groups) || every.groups < 1) {
    fail(
      typeof raw === "object" && raw !== null
        ? "options.trainEvery.groups must be a positive integer."
        : "options.trainEvery must be { groups: n } with n a positive integer (or pass options.sink).",
    );
  }
  const trainEvery = every as TrainEvery;
  checkNoSignal(trainEvery.noSignal, "options.trainEvery.noSignal", fail);
  if (typeof o.model?.train !== "function") fail("options.model must be a TrainableModel.");
  const noSignal = trainEvery.noSignal ?? o.noSignal ?? "skip";
  const own = {
    ...(o as CoordinatorTrainingOptions),
    trainEvery: { ...trainEvery, config: trainEvery.config ?? o.config, noSignal },
  };
  return { ...common, own, noSignal };
}

function checkNoSignal(value: unknown, field: string, fail: (m: string) => never): void {
  if (value !== undefined && value !== "skip" && value !== "send") {
    fail(`${field} must be "skip" or "send", not ${JSON.stringify(value)}.`);
  }
}

/** The limit as the Lua scripts take it: a step count, or undefined for none. */
export function luaStaleness(resolved: ResolvedCoordinatorOptions): number | undefined {
  const max = resolved.maxStepsOffPolicy;
  return max === Number.POSITIVE_INFINITY ? undefined : max;
}
