// The training loop over any RolloutExecutor: keep groups in flight, hand
// each scored one to a TrajectoryShipper, whose trainEvery is the one
// training loop the library has (batches, jobs, retries, the spool). The
// engine behind the executor is the only thing that changes between modes.
import { randomUUID } from "node:crypto";
import { z } from "zod";
import type { TrainEvery } from "../training/index.js";
import type { RolloutExecutor } from "../trajectory/index.js";
import { InvalidArgumentError } from "../util/argument-error.js";
import { formatZodPath } from "../wire/index.js";
import type { TrajectoryShipperOptions } from "./options.js";
import { TrajectoryShipper } from "./shipper.js";
import type { ShipperLogger, ShipperStats } from "./stats.js";

/** Options of {@link trainWithExecutor}. */
export interface TrainWithExecutorOptions<S = unknown> {
  /** The scenarios, one group each, in order; an async iterable may be endless (stop it with `signal`). */
  scenarios: Iterable<S> | AsyncIterable<S>;
  /** Rollouts per group. */
  rolloutsPerGroup: number;
  /** A training job every `groups` scored groups, with `config` (the shipper's `trainEvery`). */
  trainEvery: TrainEvery;
  /**
   * Groups submitted and not yet back, at most. Default twice
   * `trainEvery.groups`: the next batch runs while one trains.
   */
  maxGroupsInFlight?: number;
  /**
   * Each group's id. Default `<a random run id>-<index>`. A distributed
   * executor enqueues an id once, so give ids of your own to resume a run.
   */
  groupId?: (scenario: S, index: number) => string;
  /** Each group's metadata (scalars), copied onto the scored group. */
  metadata?: (scenario: S, index: number) => Record<string, unknown>;
  /** The shipper's other options (`spoolDir`, `validate`, `logger`, ...). */
  shipper?: Omit<TrajectoryShipperOptions, "model" | "trainEvery">;
  /** How long closing the shipper at the end may take, in ms. Default 30000. */
  closeTimeoutMs?: number;
  /** Stops submitting, cancels the groups in flight, and closes the shipper. */
  signal?: AbortSignal;
}

/** What {@link trainWithExecutor} did. */
export interface TrainWithExecutorResult {
  /** Groups submitted. */
  submitted: number;
  /** Scored groups handed to the shipper. */
  scored: number;
  /** Groups that failed (each logged). */
  failed: number;
  /** Groups cancelled when `signal` aborted. */
  cancelled: number;
  /** The shipper's counters when it closed (`trainingJobs`, `shipped`, ...). */
  shipper: ShipperStats;
}

const positive = z.number().int().positive();
const OptionsSchema = z.looseObject({
  scenarios: z.custom<object>(
    (v) =>
      typeof (v as Record<symbol, unknown> | null)?.[Symbol.iterator] === "function" ||
      typeof (v as Record<symbol, unknown> | null)?.[Symbol.asyncIterator] === "function",
    { error: "expected an iterable or async iterable of scenarios" },
  ),
  rolloutsPerGroup: positive.max(100_000, { error: "expected a whole number from 1 to 100000" }),
  trainEvery: z.looseObject({ groups: positive }),
  maxGroupsInFlight: positive.optional(),
  groupId: z.function().optional(),
  metadata: z.function().optional(),
  closeTimeoutMs: z.number().nonnegative().optional(),
});

const isExecutor = (v: unknown): v is RolloutExecutor =>
  ["submit", "collect", "cancelAll", "stats"].every(
    (m) => typeof (v as Record<string, unknown> | null)?.[m] === "function",
  );

/**
 * Trains `model` on groups an executor runs: submits a group per scenario
 * (at most `maxGroupsInFlight` at once), hands each scored group to a
 * `TrajectoryShipper` that logs it and trains every `trainEvery.groups`, and
 * resolves once every group is back and the shipper closed. Switching
 * engines is the line that makes the executor; this call stays.
 *
 * @example
 * const executor = new InProcessExecutor({ rollout: (s) => runAgent(s), concurrency: 16 });
 * // const executor = await BullMQExecutor.start({ connection, model }); // workers elsewhere
 * const result = await trainWithExecutor(model, executor, {
 *   scenarios, rolloutsPerGroup: 8, trainEvery: { groups: 4, config: { learningRate: 1e-5 } },
 * });
 * console.log(result.shipper.trainingJobs);
 */
export async function trainWithExecutor<S>(
  model: TrajectoryShipperOptions["model"],
  executor: RolloutExecutor<S>,
  options: TrainWithExecutorOptions<S>,
): Promise<TrainWithExecutorResult> {
  const call = "trainWithExecutor(model, executor, options)";
  if (!isExecutor(executor))
    throw new InvalidArgumentError(
      call,
      "executor",
      "a RolloutExecutor (submit, collect, cancelAll, stats)",
      executor,
    );
  if (options === null || typeof options !== "object")
    throw new InvalidArgumentError(call, "options", "an object", options);
  const parsed = OptionsSchema.safeParse(options);
  if (!parsed.success) {
    const issue = parsed.error.issues[0] as z.core.$ZodIssue;
    throw new InvalidArgumentError(
      call,
      `options.${formatZodPath(issue.path)}`,
      "",
      undefined,
      issue.message,
    );
  }
  // The shipper checks the model and the rest of trainEvery, naming them.
  const shipper = new TrajectoryShipper({
    ...options.shipper,
    model,
    trainEvery: options.trainEvery,
  });
  const logger: ShipperLogger = options.shipper?.logger ?? console;
  const run = { submitted: 0, scored: 0, failed: 0, cancelled: 0 };
  const timeoutMs = options.closeTimeoutMs ?? 30_000;
  try {
    await pump(executor, shipper, options, run, logger);
  } catch (error) {
    // What this loop submitted is not left running for no one.
    await executor.cancelAll().catch(() => 0);
    await shipper.close({ timeoutMs });
    throw error;
  }
  if (options.signal?.aborted) run.cancelled += await executor.cancelAll();
  return { ...run, shipper: await shipper.close({ timeoutMs }) };
}

type Counts = Omit<TrainWithExecutorResult, "shipper">;

async function pump<S>(
  executor: RolloutExecutor<S>,
  shipper: TrajectoryShipper,
  options: TrainWithExecutorOptions<S>,
  run: Counts,
  logger: ShipperLogger,
): Promise<void> {
  const { signal } = options;
  const max = options.maxGroupsInFlight ?? 2 * options.trainEvery.groups;
  const runId = randomUUID().slice(0, 8);
  const source = toAsyncIterator(options.scenarios);
  const inFlight = new Set<string>();
  let index = 0;
  let exhausted = false;
  const fill = async () => {
    while (!exhausted && inFlight.size < max && !signal?.aborted) {
      const next = await source.next();
      if (next.done) {
        exhausted = true;
        return;
      }
      const scenario = next.value;
      const i = index++;
      const id = options.groupId?.(scenario, i) ?? `${runId}-${i}`;
      const metadata = options.metadata?.(scenario, i);
      await executor.submit({ id, scenario, rollouts: options.rolloutsPerGroup, metadata });
      inFlight.add(id);
      run.submitted++;
    }
  };
  await fill();
  const outcomes = executor.collect()[Symbol.asyncIterator]();
  const aborted = signal ? abortedBy(signal) : undefined;
  aborted?.catch(() => {});
  try {
    while (inFlight.size > 0 && !signal?.aborted) {
      const next = await (aborted ? Promise.race([outcomes.next(), aborted]) : outcomes.next());
      if (next.done) {
        logger.warn(
          `trainWithExecutor: the executor closed with ${inFlight.size} group(s) still out; they are not trained here.`,
        );
        return;
      }
      const outcome = next.value;
      inFlight.delete(outcome.id);
      if (outcome.status === "scored") {
        await shipper.add(outcome.group);
        run.scored++;
      } else {
        run.failed++;
        logger.warn(
          `trainWithExecutor: group ${outcome.id} failed and is not trained: ${outcome.error.message}`,
        );
      }
      await fill();
    }
  } catch (error) {
    if (!signal?.aborted) throw error;
  } finally {
    await outcomes.return?.();
  }
}

function toAsyncIterator<S>(scenarios: Iterable<S> | AsyncIterable<S>): AsyncIterator<S> {
  const asyncIterable = (scenarios as AsyncIterable<S>)[Symbol.asyncIterator];
  if (typeof asyncIterable === "function") return asyncIterable.call(scenarios);
  const it = (scenarios as Iterable<S>)[Symbol.iterator]();
  return { next: async () => it.next() };
}

/** Rejects once the signal aborts: what the loop races its waits against. */
function abortedBy(signal: AbortSignal): Promise<never> {
  return new Promise<never>((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener("abort", () => reject(signal.reason), { once: true });
  });
}
