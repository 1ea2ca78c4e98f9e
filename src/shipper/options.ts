// The shipper's own options (not the model, trainEvery or validate, checked
// where they are used), as one zod schema: a wrong value is refused at
// construction with the field's path and what was expected.
import { z } from "zod";
import { InvalidArgumentError } from "../util/argument-error.js";
import { formatZodPath } from "../wire/index.js";

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
