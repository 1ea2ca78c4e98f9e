// The rollout-executor seam: what a training loop needs from whatever runs
// its rollouts (this process, BullMQ workers, another engine). Declared here,
// beside the groups it hands back, so that every engine's adapter and the
// loop above depend on it and never on each other.
import { z } from "zod";
import { InvalidArgumentError, kindOf } from "../util/argument-error.js";
import type { TrajectoryGroup } from "./group.js";

/**
 * One scenario's group of rollouts, as a training loop asks an executor for it.
 *
 * @example
 * const request: RolloutGroupRequest<{ question: string }> = {
 *   id: "run7-q42", scenario: { question: "2+2?" }, rollouts: 8, metadata: { split: "train" },
 * };
 */
export interface RolloutGroupRequest<S = unknown> {
  /**
   * The group's id, unique in the run: its outcome carries it, `cancel`
   * takes it, and the finished group's `metadata.group_id` holds it.
   */
  id: string;
  /**
   * What each rollout of the group receives. Executors that send it to
   * other processes need plain JSON.
   */
  scenario: S;
  /** How many rollouts the group has (1 to 100000). */
  rollouts: number;
  /** Copied onto the finished group's `metadata`, beside `group_id`. */
  metadata?: Record<string, unknown>;
}

/**
 * What an executor hands back for a group it was given: the finished group,
 * scored (by the executor's `afterEach`), or the reason it will never come.
 *
 * @example
 * for await (const o of executor.collect()) {
 *   if (o.status === "scored") await shipper.add(o.group);
 *   else console.error(`group ${o.id} failed: ${o.error.message}`);
 * }
 */
export type RolloutOutcome =
  | { status: "scored"; id: string; group: TrajectoryGroup }
  | { status: "failed"; id: string; error: Error };

/**
 * Counts of an executor's groups since it started. Every group submitted
 * here is `running` until it ends as exactly one of `scored`, `failed` or
 * `cancelled`; `waiting` counts outcomes produced and not yet taken from
 * `collect()`.
 *
 * @example
 * const { running, scored, failed, cancelled } = executor.stats();
 */
export interface RolloutExecutorStats {
  /** Groups accepted by `submit`. */
  submitted: number;
  /** Submitted groups with no outcome yet. */
  running: number;
  /** Scored groups produced (a distributed engine may also produce ones an earlier process submitted). */
  scored: number;
  /** Failed groups produced. */
  failed: number;
  /** Groups stopped by `cancel` or `cancelAll`: they produce no outcome. */
  cancelled: number;
  /** Outcomes produced and not yet taken from `collect()`. */
  waiting: number;
}

/**
 * Runs groups of rollouts and hands them back scored, in the order they
 * finish: the seam between a training loop (`trainWithExecutor`) and the
 * engine that runs the rollouts. `InProcessExecutor` runs them in this
 * process; `BullMQExecutor` (`trajectory-recorder/bullmq`) on workers
 * anywhere; docs/distributed.md ("Other engines") says how to write one for
 * another engine.
 *
 * @example
 * await executor.submit({ id: "g1", scenario, rollouts: 8 });
 * for await (const outcome of executor.collect()) {
 *   if (outcome.status === "scored") await shipper.add(outcome.group);
 * }
 */
export interface RolloutExecutor<S = unknown> {
  /**
   * Accepts a group: resolves once the engine holds it (it may not have
   * started). Refuses a malformed request with an `InvalidArgumentError`
   * naming the field (`request.rollouts`), before anything runs.
   */
  submit(request: RolloutGroupRequest<S>): Promise<void>;
  /**
   * The outcomes in the order groups finish. One consumer at a time. An
   * outcome counts as delivered (for an engine that records delivery, as
   * BullMQ's hand-off does) only once the consumer asks for the next one or
   * leaves the loop: after the loop body that took it has run. Ends when
   * the executor closes.
   */
  collect(): AsyncIterable<RolloutOutcome>;
  /**
   * Stops a group: its rollouts not started never start, and it produces no
   * outcome. Resolves true if the group was running here (or, for a
   * distributed engine, known to the engine) and is now cancelled.
   */
  cancel(id: string): Promise<boolean>;
  /** Cancels every running group; resolves with how many were cancelled. */
  cancelAll(): Promise<number>;
  /** The counts so far. */
  stats(): RolloutExecutorStats;
  /**
   * Stops collecting and releases the engine's resources. Outcomes not taken
   * are counted and logged (a distributed engine keeps them for the next
   * process).
   */
  close(): Promise<void>;
}

const RequestSchema = z.object({
  id: z
    .string({ error: "expected a non-empty string" })
    .min(1, { error: "expected a non-empty string" })
    .max(512, { error: "expected at most 512 characters" }),
  scenario: z.unknown(),
  rollouts: z
    .number({ error: "expected a whole number from 1 to 100000" })
    .int({ error: "expected a whole number from 1 to 100000" })
    .min(1, { error: "expected a whole number from 1 to 100000" })
    .max(100_000, { error: "expected a whole number from 1 to 100000" }),
  metadata: z
    .record(z.string(), z.unknown(), { error: "expected an object of scalars" })
    .optional(),
});

/**
 * Throws {@link InvalidArgumentError} naming the first bad field of a group
 * request (`request.rollouts`), for executors to call first in `submit`.
 *
 * @example
 * checkGroupRequest("MyExecutor.submit(request)", request);
 */
export function checkGroupRequest(call: string, request: unknown): void {
  if (request === null || typeof request !== "object" || Array.isArray(request))
    throw new InvalidArgumentError(
      call,
      "request",
      "an object { id, scenario, rollouts }",
      request,
    );
  const parsed = RequestSchema.safeParse(request);
  if (parsed.success) return;
  const issue = parsed.error.issues[0];
  const path = (issue?.path ?? []).map(String);
  let value: unknown = request;
  for (const key of path) value = (value as Record<string, unknown> | undefined)?.[key];
  throw new InvalidArgumentError(
    call,
    ["request", ...path].join("."),
    "",
    value,
    `${issue?.message ?? "invalid"}, received ${kindOf(value)}`,
  );
}
