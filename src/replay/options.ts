// The options of replayGroups, checked before anything is read or sent: each
// bad field is named by its path, with what was expected.
import { z } from "zod";
import { InvalidArgumentError, isObjectLike } from "../util/argument-error.js";
import type { ReplayOptions } from "./types.js";

const CALL = "replayGroups(options)";

/**
 * The defaults of {@link ReplayOptions}: `n` answers per state, and with a
 * tool runner at most `maxTurns` answers per sample.
 *
 * @example
 * replayGroups({ store, model, judge, n: REPLAY_DEFAULTS.n * 2 });
 */
export const REPLAY_DEFAULTS = { n: 4, maxTurns: 8 } as const;

const whole = (min: number) => z.number().int().min(min);
const time = z.union([z.date(), z.number().finite()]);

// The plain-data fields; functions and objects with methods are checked by hand.
const DataSchema = z.object({
  n: whole(2).optional(),
  maxTurns: whole(1).optional(),
  requestOptions: z.record(z.string(), z.unknown()).optional(),
  select: z
    .strictObject({
      limit: whole(1).optional(),
      negativeAtMost: z.number().finite().optional(),
      seed: z.number().int().optional(),
      ids: z.array(z.string().min(1)).optional(),
      since: time.optional(),
      until: time.optional(),
    })
    .optional(),
});

const EXPECTED: Record<string, string> = {
  n: "a whole number of at least 2 (a group of one has nothing to compare)",
  maxTurns: "a whole number of at least 1",
  requestOptions: "an object of request fields",
  "select.limit": "a whole number of at least 1",
  "select.negativeAtMost": "a finite number",
  "select.seed": "a whole number",
  "select.ids": "an array of trajectory ids",
  "select.since": "a Date or a time in ms",
  "select.until": "a Date or a time in ms",
};

/** Throws `InvalidArgumentError` naming the first bad field of `options`. */
export function checkReplayOptions(options: unknown): asserts options is ReplayOptions {
  if (!isObjectLike(options))
    throw new InvalidArgumentError(CALL, "options", "an object { store, model, n, ... }", options);
  const store = options.store as Record<string, unknown> | undefined;
  if (typeof store?.list !== "function" || typeof store?.get !== "function")
    throw new InvalidArgumentError(CALL, "options.store", "a TrajectoryStore", options.store);
  const model = options.model as Record<string, unknown> | undefined;
  if (typeof model?.openai !== "function")
    throw new InvalidArgumentError(CALL, "options.model", "a TrainableModel", options.model);
  if (options.reward === undefined && options.judge === undefined)
    throw new InvalidArgumentError(
      CALL,
      "options.reward",
      "a reward function, or options.judge, or both (nothing would score the group)",
      undefined,
    );
  for (const key of ["reward", "toolRunner"] as const)
    if (options[key] !== undefined && typeof options[key] !== "function")
      throw new InvalidArgumentError(CALL, `options.${key}`, "a function", options[key]);
  if (options.judge !== undefined && !isObjectLike(options.judge))
    throw new InvalidArgumentError(
      CALL,
      "options.judge",
      "judge options { client, model }",
      options.judge,
    );
  const recorder = options.recorder as Record<string, unknown> | undefined;
  if (recorder !== undefined && typeof recorder?.rollout !== "function")
    throw new InvalidArgumentError(CALL, "options.recorder", "a Recorder", recorder);
  const logger = options.logger as Record<string, unknown> | undefined;
  if (logger !== undefined && typeof logger?.info !== "function")
    throw new InvalidArgumentError(CALL, "options.logger", "an object with info(message)", logger);
  const parsed = DataSchema.safeParse({
    n: options.n,
    maxTurns: options.maxTurns,
    requestOptions: options.requestOptions,
    select: options.select,
  });
  if (parsed.success) return;
  const issue = parsed.error.issues[0] as z.core.$ZodIssue;
  const path = [...issue.path, ...("keys" in issue ? [issue.keys[0] as string] : [])];
  const field = path.map((k) => (typeof k === "number" ? `[${k}]` : `.${String(k)}`)).join("");
  const key = field.slice(1).replace(/\[\d+\]$/, "");
  const value = path.reduce<unknown>(
    (v, k) => (isObjectLike(v) ? (v as Record<PropertyKey, unknown>)[k as PropertyKey] : undefined),
    options,
  );
  throw new InvalidArgumentError(
    CALL,
    `options${field}`,
    EXPECTED[key] ?? (issue.code === "unrecognized_keys" ? "no such option" : "a valid value"),
    value,
    issue.code === "unrecognized_keys" ? "it is not an option of select" : undefined,
  );
}
