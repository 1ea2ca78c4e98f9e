// A rollout that went wrong for reasons outside the policy (an upstream 5xx,
// the network, a timeout, a stream cut off, a crashed tool runner) says
// nothing about how good the policy is: scored as a zero it would drag its
// group's mean down and teach the model to avoid what it did right
// (open-instruct #1887). The mark lives in ART's free-form `metadata`, so the
// wire JSON keeps ART's shape and any service takes it.

/**
 * The trajectory metadata key of an infrastructure failure. Its value is the
 * kind of failure (a string, e.g. `"upstream_error"`) when the rollout is
 * marked, `false` when the application said it is not one (the recorder then
 * never marks it), absent otherwise.
 */
export const INFRA_FAILURE_KEY = "infra_failure";

/**
 * The kinds of infrastructure failure the recorder marks by itself, and the
 * ones an application marks (`"tool_runner"`, `"manual"`). Any other
 * non-empty string marks a trajectory too.
 */
export type InfraFailureKind =
  | "upstream_error"
  | "transport"
  | "timeout"
  | "stream_cut"
  | "tool_runner"
  | "manual";

type WithMetadata = { metadata?: unknown; logs?: unknown };

function metadataOf(t: unknown): Record<string, unknown> | undefined {
  const m = (t as WithMetadata | null | undefined)?.metadata;
  return m && typeof m === "object" && !Array.isArray(m)
    ? (m as Record<string, unknown>)
    : undefined;
}

/**
 * The kind of infrastructure failure a trajectory (a `Trajectory` or its wire
 * JSON) is marked with, or `undefined` when it is not marked.
 */
export function infraFailureOf(t: unknown): string | undefined {
  const value = metadataOf(t)?.[INFRA_FAILURE_KEY];
  if (typeof value === "string" && value !== "") return value;
  return value === true ? "manual" : undefined;
}

/** Whether the application said the trajectory is no infrastructure failure (`metadata.infra_failure: false`). */
export function keptByApplication(t: unknown): boolean {
  return metadataOf(t)?.[INFRA_FAILURE_KEY] === false;
}

/** How many of `trajectories` are marked as infrastructure failures. */
export function countInfraFailures(trajectories: readonly unknown[]): number {
  let n = 0;
  for (const t of trajectories) if (infraFailureOf(t) !== undefined) n++;
  return n;
}

/** `trajectories` without those marked as infrastructure failures (the same array when none is). */
export function withoutInfraFailures<T>(trajectories: readonly T[]): readonly T[] {
  if (countInfraFailures(trajectories) === 0) return trajectories;
  return trajectories.filter((t) => infraFailureOf(t) === undefined);
}
