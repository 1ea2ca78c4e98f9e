// The shipper's options, declared with their defaults, and the check of its
// own ones (not the model, trainEvery or validate, checked where they are
// used) as one zod schema: a wrong value is refused at construction with the
// field's path and what was expected.
import { z } from "zod";
import type { BackoffOptions } from "../client/index.js";
import type { TrainableModel, TrainEvery } from "../training/index.js";
import type { ValidateOptions } from "../trajectory/index.js";
import { InvalidArgumentError } from "../util/argument-error.js";
import { formatZodPath } from "../wire/index.js";
import type { ShipperLogger } from "./stats.js";

/** Options of {@link TrajectoryShipper}. */
export interface TrajectoryShipperOptions {
  /** The model groups are logged to (and trained on, with `trainEvery`). */
  model: Pick<TrainableModel, "log" | "train" | "followJob" | "id">;
  /** The split groups are logged under. Default `"train"`. */
  split?: string;
  /**
   * Start a training job every `groups` logged groups, with `config`. One job
   * at a time; `pollIntervalMs` is passed to `train`. With a spool, a job's id
   * is saved as soon as the service names it, and a restart follows that job
   * instead of training its groups again. A logged group whose rewards are
   * all equal teaches nothing (every advantage is zero): with `noSignal:
   * "skip"` (default) it is logged as usual but left out of the jobs,
   * counted in `stats().noSignal`; `"send"` trains on it too.
   */
  trainEvery?: TrainEvery;
  /** Requests in flight at once. Default 2. */
  concurrency?: number;
  /**
   * Serialized bytes held in memory before `add` waits. Default 64 MiB: room
   * for two 20 MB groups in flight and the next one. A group larger than
   * this still ships, alone.
   */
  maxQueuedBytes?: number;
  /**
   * A directory where each group waits on disk until the service confirmed
   * it; replayed on the next start. The shipper locks it (a `shipper.lock`
   * file naming its pid and host) from the constructor until `close` or the
   * process's exit, and takes over a lock left by a process that is gone. The
   * constructor throws {@link SpoolLockedError} while another shipper holds it.
   */
  spoolDir?: string;
  /** Attempts per group on transient failures (connection, 408, 429, 5xx). Default 8. */
  maxAttempts?: number;
  /** Backoff between attempts (the client's `retryDelay`). Default: 500 ms doubling to 8 s, jittered. */
  backoff?: BackoffOptions;
  /**
   * Flush on `beforeExit`, `SIGTERM` and `SIGINT` (then the signal keeps its
   * meaning: the process ends by it, unless another handler is installed). On
   * `process.exit()`, which cannot wait, what is left is logged. Default true.
   */
  flushOnExit?: boolean;
  /**
   * Deadline of the flush on `beforeExit`, `SIGTERM` and `SIGINT`, in ms. Past it the
   * shipper closes: what is left is counted, reported, and stays in the spool.
   * Default 10000.
   */
  exitTimeoutMs?: number;
  /** Where warnings and errors go. Default: `console`. */
  logger?: ShipperLogger;
  /**
   * The check run on each group by `add` before it is queued (see
   * `validateGroup`): a mode, full options, or `false`. Default `"warn"`
   * (through `logger`, and the group is shipped); `"throw"` makes `add`
   * reject it; with `"drop"` bad trajectories and refused groups are logged
   * and left out.
   */
  validate?: ValidateOptions | ValidateOptions.ValidationMode | false;
}

const positiveInteger = z.number().int().positive();
const delay = z.number().finite().nonnegative();

const ShipperOptionsSchema = z.looseObject({
  split: z.string().min(1).optional(),
  /** p-queue takes Infinity for "no limit". */
  concurrency: z
    .union([positiveInteger, z.literal(Number.POSITIVE_INFINITY)], {
      error: "expected a positive integer or Infinity",
    })
    .optional(),
  maxQueuedBytes: positiveInteger.optional(),
  spoolDir: z.string().min(1).optional(),
  maxAttempts: positiveInteger.optional(),
  backoff: z
    .looseObject({
      initialDelayMs: delay.optional(),
      maxDelayMs: delay.optional(),
      maxRetryAfterMs: delay.optional(),
      random: z.function().optional(),
    })
    .optional(),
  flushOnExit: z.boolean().optional(),
  exitTimeoutMs: delay.optional(),
  logger: z
    .custom<{ warn: unknown }>(
      (v) =>
        typeof v === "object" && v !== null && typeof (v as { warn?: unknown }).warn === "function",
      { error: "expected a logger with a warn(message) method" },
    )
    .optional(),
});

/** Throws InvalidArgumentError naming `options.<field>` when a shipper option is wrong. */
export function checkShipperOptions(call: string, options: object): void {
  const parsed = ShipperOptionsSchema.safeParse(options);
  if (parsed.success) return;
  const issue = parsed.error.issues[0] as z.core.$ZodIssue;
  const field = `options.${formatZodPath(issue.path)}`;
  throw new InvalidArgumentError(call, field, "", undefined, issue.message);
}
