// The options of the gathers, checked with zod before anything runs: a
// wrong one is an InvalidArgumentError naming it (`options.concurrency`) and
// what was expected, never a limit silently dropped (NaN) or a dependency's
// own TypeError.
import { z } from "zod";
import { InvalidArgumentError, kindOf } from "../util/argument-error.js";

/** A value `test` accepts; otherwise the issue says `expected`. */
const valid = <T>(test: (v: unknown) => boolean, expected: string) =>
  z.custom<T>(test, { message: expected });
const fn = (expected: string) =>
  valid<(...args: never[]) => unknown>((v) => typeof v === "function", expected);
const finite = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);
const positiveMs = valid<number>((v) => finite(v) && v > 0, "a positive number of ms");

const common = {
  maxExceptions: valid<number>(
    (v) => finite(v) && v >= 0,
    "a number of at least 0: a count of rollouts, or a fraction of them below 1",
  ),
  concurrency: valid<number>(
    (v) => v === Number.POSITIVE_INFINITY || (Number.isInteger(v) && (v as number) >= 1),
    "a whole number of rollouts of at least 1 (or Infinity)",
  ),
  onProgress: fn("a function"),
  label: valid<string>((v) => typeof v === "string", "a string"),
  progressStream: valid<object>(
    (v) => typeof (v as { write?: unknown } | null)?.write === "function",
    "a stream with write()",
  ),
  signal: valid<AbortSignal>(
    (v) =>
      typeof (v as { aborted?: unknown } | null)?.aborted === "boolean" &&
      typeof (v as { addEventListener?: unknown }).addEventListener === "function",
    "an AbortSignal",
  ),
  rolloutTimeout: positiveMs,
};

const groupsOptions = z
  .object({
    ...common,
    afterEach: fn("a function (group) => group | groups | undefined"),
    hookTimeout: positiveMs,
    maxMetrics: valid<number>(
      (v) => Number.isInteger(v) && (v as number) >= 0,
      "a whole number of at least 0",
    ),
    logger: valid<object>(
      (v) => typeof (v as { warn?: unknown } | null)?.warn === "function",
      "an object with warn(message)",
    ),
    sink: valid<object>(
      (v) => typeof (v as { add?: unknown } | null)?.add === "function",
      "an object with add(group), such as a shipper",
    ),
  })
  .partial();

const trajectoriesOptions = z.object(common).partial();

function check(schema: z.ZodType, call: string, options: unknown): void {
  if (options === null || typeof options !== "object" || Array.isArray(options))
    throw new InvalidArgumentError(call, "options", "an object", options);
  // Undefined means "the default", as an absent key does.
  const given = Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined));
  const parsed = schema.safeParse(given);
  if (parsed.success) return;
  const issue = parsed.error.issues[0];
  const key = issue?.path.map(String).join(".") ?? "";
  const value = (given as Record<string, unknown>)[String(issue?.path[0])];
  const expected = issue?.message ?? "a valid value";
  throw new InvalidArgumentError(
    call,
    key ? `options.${key}` : "options",
    expected,
    value,
    `expected ${expected}, received ${kindOf(value)}${typeof value === "number" ? ` (${value})` : ""}`,
  );
}

/** Throws {@link InvalidArgumentError} naming the first bad option of `gatherTrajectoryGroups`. */
export function checkGatherOptions(
  options: unknown,
  call = "gatherTrajectoryGroups(groups, options)",
): void {
  check(groupsOptions, call, options);
}

/** Throws {@link InvalidArgumentError} naming the first bad option of `gatherTrajectories`. */
export function checkGatherTrajectoriesOptions(options: unknown): void {
  check(trajectoriesOptions, "gatherTrajectories(rollouts, options)", options);
}
