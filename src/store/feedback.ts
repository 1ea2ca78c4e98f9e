// Feedback as it travels (snake_case, zod-checked), the record the store
// keeps, and the one rule that turns a trajectory's feedback into its reward,
// metrics and training eligibility.
import { z } from "zod";
import { InvalidFeedbackError } from "./errors.js";

/** The longest `comment` taken, in characters (4 KiB of ASCII). */
export const MAX_FEEDBACK_COMMENT = 4096;
/** The longest `idempotency_key` taken, in characters. */
export const MAX_IDEMPOTENCY_KEY = 200;
/** The metric each per-call value is kept under: `turn_reward_<call>`. */
export const TURN_REWARD_PREFIX = "turn_reward_";
/** The metric holding the sum of the per-call values. */
export const SHAPING_REWARD = "shaping_reward";

const metrics = z
  .record(z.string().min(1), z.union([z.number().finite(), z.boolean()]))
  .superRefine((values, ctx) => {
    for (const name of Object.keys(values))
      if (name.startsWith(TURN_REWARD_PREFIX) || name === SHAPING_REWARD)
        ctx.addIssue({
          code: "custom",
          path: [name],
          message: `metric names ${TURN_REWARD_PREFIX}<call> and ${SHAPING_REWARD} are kept for the per-call values (send them as turns)`,
        });
  });

/**
 * Feedback for one recorded trajectory, as `POST /v1/feedback` takes it.
 * Strict: an unknown field is refused with its name.
 *
 * - `reward`: the task reward; the latest feedback that has one sets the
 *   trajectory's `reward`.
 * - `metrics`: numbers or booleans merged into the trajectory's metrics (a later feedback wins).
 * - `comment`: free text, at most 4,096 characters; kept with the feedback, never in the trajectory.
 * - `eligible`: whether the trajectory may be trained on (the aggregation rule in docs/production.md).
 * - `turns`: values for single calls (`call` is the 1-based call number of the receipt).
 * - `idempotency_key`: a resend with the same key and content is stored once.
 * - `source`: who sent it (`"browser"`, `"ci"`), for reading back.
 *
 * @example
 * FeedbackInputSchema.parse({ trajectory_id: "t_1", reward: 1, comment: "solved" });
 */
export const FeedbackInputSchema = z.strictObject({
  trajectory_id: z.string().min(1).max(200),
  reward: z.number().finite().optional(),
  metrics: metrics.optional(),
  comment: z.string().max(MAX_FEEDBACK_COMMENT).optional(),
  eligible: z.boolean().optional(),
  turns: z
    .array(z.strictObject({ call: z.number().int().min(1), reward: z.number().finite() }))
    .max(10_000)
    .optional(),
  idempotency_key: z.string().min(1).max(MAX_IDEMPOTENCY_KEY).optional(),
  source: z.string().min(1).max(200).optional(),
});
/** Feedback for one recorded trajectory, as it travels. Its shape is what `FeedbackInputSchema` returns. */
export type FeedbackInput = z.infer<typeof FeedbackInputSchema>;

/** The content fields of feedback, in the order a conflict is reported. */
export const FEEDBACK_FIELDS = [
  "reward",
  "metrics",
  "comment",
  "eligible",
  "turns",
  "source",
] as const;
/** A content field of feedback (what a signed token may allow). */
export type FeedbackField = (typeof FEEDBACK_FIELDS)[number];

/**
 * Feedback as the store keeps it: the input plus its id, its 1-based position
 * among the trajectory's feedback (`n`) and when it was stored.
 */
export type FeedbackRecord = FeedbackInput & {
  /** The store's id for this feedback. */
  feedback_id: string;
  /** Its position among the trajectory's feedback, from 1: later feedback wins. */
  n: number;
  /** When it was stored, as an ISO 8601 string. */
  created_at: string;
};

/**
 * Checks a feedback body (parsed JSON) and returns it typed, or throws
 * `InvalidFeedbackError` naming every bad field by its path.
 *
 * @example
 * const input = parseFeedback(JSON.parse(body)); // throws InvalidFeedbackError (400)
 */
export function parseFeedback(body: unknown): FeedbackInput {
  const parsed = FeedbackInputSchema.safeParse(body);
  if (parsed.success) return parsed.data;
  throw new InvalidFeedbackError(parsed.error.issues.map(describeIssue));
}

function describeIssue(issue: z.core.$ZodIssue): string {
  const at = issue.path.reduce<string>(
    (out, key) =>
      typeof key === "number" ? `${out}[${key}]` : out ? `${out}.${String(key)}` : String(key),
    "",
  );
  if (issue.code === "unrecognized_keys") {
    const names = issue.keys.map((k) => (at ? `${at}.${k}` : k)).join(", ");
    return `${names}: unknown field${issue.keys.length > 1 ? "s" : ""} (expected ${at ? "call, reward" : "trajectory_id, reward, metrics, comment, eligible, turns, idempotency_key, source"})`;
  }
  return `${at || "body"}: ${issue.message}`;
}

/**
 * The first content field in which two feedbacks differ (the trajectory
 * first), or undefined when they carry the same content.
 */
export function firstDifference(a: FeedbackInput, b: FeedbackInput): string | undefined {
  if (a.trajectory_id !== b.trajectory_id) return "trajectory_id";
  for (const field of FEEDBACK_FIELDS)
    if (canonical(a[field]) !== canonical(b[field])) return field;
  return undefined;
}

/** JSON with object keys sorted, so `{a,b}` and `{b,a}` compare equal. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v) =>
    v && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)))
      : v,
  );
}

/** What a trajectory's feedback adds up to. */
export type FeedbackOutcome = {
  /** The trajectory's reward, or null when no feedback gave one. */
  reward: number | null;
  /** Where `reward` came from. */
  rewardFrom: "task" | "turns" | null;
  /** Metrics from feedback, with `turn_reward_<call>` and `shaping_reward` when turns were given. */
  metrics: Record<string, number | boolean>;
  /** Whether the trajectory may be trained on; null until it has a reward or a feedback says. */
  eligible: boolean | null;
};

/**
 * The aggregation rule, applied to a trajectory's feedback in order (`n`):
 *
 * - **reward**: the latest feedback that has a `reward` gives the task
 *   reward, which is the trajectory's reward. Only when no feedback ever gave
 *   one is the reward the mean of the per-call values.
 * - **turns**: per call, the latest value wins; each is kept in metrics as
 *   `turn_reward_<call>`, and their sum as `shaping_reward`: shaping stays apart
 *   from the task reward.
 * - **metrics**: merged in order, a later feedback's value wins.
 * - **eligible**: the latest feedback that says `eligible` decides; without
 *   one, a trajectory is eligible once it has a reward (null before).
 *
 * @example
 * aggregateFeedback([{ trajectory_id: "t", turns: [{ call: 1, reward: 1 }, { call: 2, reward: 0 }] }]).reward; // 0.5
 */
export function aggregateFeedback(feedback: readonly FeedbackInput[]): FeedbackOutcome {
  let task: number | null = null;
  let said: boolean | null = null;
  const metrics: Record<string, number | boolean> = {};
  const turns = new Map<number, number>();
  for (const f of feedback) {
    if (f.reward !== undefined) task = f.reward;
    if (f.eligible !== undefined) said = f.eligible;
    if (f.metrics) Object.assign(metrics, f.metrics);
    for (const t of f.turns ?? []) turns.set(t.call, t.reward);
  }
  let shaping = 0;
  for (const [call, value] of [...turns].sort(([a], [b]) => a - b)) {
    metrics[`${TURN_REWARD_PREFIX}${call}`] = value;
    shaping += value;
  }
  if (turns.size > 0) metrics[SHAPING_REWARD] = shaping;
  const reward = task ?? (turns.size > 0 ? shaping / turns.size : null);
  return {
    reward,
    rewardFrom: task !== null ? "task" : turns.size > 0 ? "turns" : null,
    metrics,
    eligible: said ?? (reward !== null ? true : null),
  };
}
