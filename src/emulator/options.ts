import { z } from "zod";
import { InvalidArgumentError, isObjectLike } from "../util/argument-error.js";
import { formatZodPath } from "../wire/index.js";

const positive = z.number().positive().optional();

// Unknown keys are let through, as before: only the types of the known ones are checked.
const EmulatorOptionsSchema = z.looseObject({
  port: z.number().int().min(0).max(65_535).optional(),
  host: z.string().optional(),
  apiKeys: z.union([z.array(z.string()), z.record(z.string(), z.string())]).optional(),
  apiKeysFile: z.string().optional(),
  dataDir: z.string().optional(),
  upstream: z.string().optional(),
  maxBodyBytes: positive,
  sftDataDir: z.string().optional(),
  fetchTrainingData: z
    .union([z.boolean(), z.looseObject({ maxBytes: positive, timeoutMs: positive })])
    .optional(),
  drift: z
    .union([
      z.boolean(),
      z.strictObject({ reasoning: z.boolean().optional(), toolArguments: z.boolean().optional() }),
    ])
    .optional(),
  onWarning: z
    .custom<(message: string) => void>((v) => typeof v === "function", "expected a function")
    .optional(),
});

/**
 * Checks `startEmulator`'s options before anything starts, naming the first
 * bad one (`options.port: ...`).
 */
export function checkEmulatorOptions(options: unknown): void {
  const call = "startEmulator(options)";
  if (!isObjectLike(options) || Array.isArray(options))
    throw new InvalidArgumentError(call, "options", "an object", options);
  const parsed = EmulatorOptionsSchema.safeParse(options);
  const issue = parsed.error?.issues[0];
  if (!issue) return;
  const path = `options.${formatZodPath(issue.path)}`;
  throw new InvalidArgumentError(
    call,
    path,
    "",
    undefined,
    issue.message.replace(/^Invalid input: /, ""),
  );
}
