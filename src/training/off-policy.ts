// Groups sampled by a checkpoint too far behind the one being trained are
// dropped before the job, as ART's pipeline trainer does
// (`max_steps_off_policy`, default 4): their advantages describe a policy
// the model has moved away from.

import { oldestPolicyVersion } from "../trajectory/index.js";

/** ART's default: a group may be at most 4 steps behind the checkpoint being trained. */
export const DEFAULT_MAX_STEPS_OFF_POLICY = 4;

/** The step metric counting the groups a `train` call dropped as too far off-policy. */
export const STALE_GROUPS_METRIC = "data/step_num_groups_stale";

/**
 * What is wrong with a `maxStepsOffPolicy` value (`undefined` when nothing
 * is): an integer, 0 or more, or `Infinity` (never drop).
 */
export function maxStepsOffPolicyProblem(value: unknown): string | undefined {
  if (value === undefined || value === Number.POSITIVE_INFINITY) return undefined;
  if (typeof value === "number" && Number.isInteger(value) && value >= 0) return undefined;
  const got = typeof value === "number" ? String(value) : value === null ? "null" : typeof value;
  return `expected an integer, 0 or more, or Infinity (never drop), got ${got}`;
}

/**
 * The indexes of `groups` whose oldest trajectory started more than `max`
 * steps behind `step` (a group with no version is never stale).
 */
export function staleIndexes(groups: readonly unknown[], step: number, max: number): number[] {
  if (max === Number.POSITIVE_INFINITY) return [];
  const out: number[] = [];
  groups.forEach((g, i) => {
    const version = oldestPolicyVersion(g);
    if (version !== undefined && step - version > max) out.push(i);
  });
  return out;
}

/** Whether any group carries a policy version (so the current step is worth asking for). */
export function anyVersioned(groups: readonly unknown[]): boolean {
  return groups.some((g) => oldestPolicyVersion(g) !== undefined);
}
