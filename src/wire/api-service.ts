// The Training Service's own answers, as they travel (snake_case): its 422
// validation errors, health and system checks, and zod issues rendered as the
// FastAPI items of a 422 (the emulator answers with them).
import { z } from "zod";
import { InvalidArgumentError, isObjectLike } from "../util/argument-error.js";
import { sameType } from "./same-type.js";

// ---------------------------------------------------------------- errors and checks

/**
 * One item of a FastAPI-style validation error.
 *
 * @example
 * const item: ValidationErrorItem = { loc: ["body", "split"], msg: "Field required", type: "missing" };
 */
export const ValidationErrorItemSchema = z.looseObject({
  loc: z.array(z.union([z.string(), z.number()])),
  msg: z.string(),
  type: z.string(),
});
/**
 * One item of a FastAPI-style validation error. Its shape is what `ValidationErrorItemSchema`
 * returns.
 */
export type ValidationErrorItem = z.infer<typeof ValidationErrorItemSchema>;

/**
 * The service's 422 body: `{detail: [{loc, msg, type}]}`.
 *
 * @example
 * const parsed = HTTPValidationErrorSchema.safeParse(body);
 */
export const HTTPValidationErrorSchema = z.looseObject({
  detail: z.array(ValidationErrorItemSchema),
});
/**
 * The service's 422 body: `{detail: [{loc, msg, type}]}`. Its shape is what
 * `HTTPValidationErrorSchema` returns.
 */
export type HTTPValidationError = z.infer<typeof HTTPValidationErrorSchema>;

/**
 * Response of `GET /v1/health`; its shape is not documented, so anything is kept.
 *
 * @example
 * const { status } = HealthResponseSchema.parse(body);
 */
export const HealthResponseSchema = z.looseObject({ status: z.string().optional() });
/** Response of `GET /v1/health`; its shape is not documented, so every key is kept. */
export interface HealthResponse {
  /** The service's status, e.g. `"ok"`, when it says one. */
  status?: string | undefined;
  /** Fields the service sends, kept as sent. */
  [key: string]: unknown;
}
sameType<HealthResponse, z.infer<typeof HealthResponseSchema>>(true);

/**
 * Response of `GET /v1/system-check`; the service answers 503 when a check fails.
 * The contract names `api`, `database`, `cpu_queue` and `gpu_queue` but does
 * not publish their shapes, so every key is kept as sent.
 *
 * @example
 * const report = SystemCheckResponseSchema.parse(body);
 */
export const SystemCheckResponseSchema = z.looseObject({ status: z.string().optional() });
/**
 * Response of `GET /v1/system-check` (a failed check answers 503). The contract
 * names `api`, `database`, `cpu_queue` and `gpu_queue` without their shapes, so
 * every key is kept as sent.
 */
export interface SystemCheckResponse {
  /** The overall status, when the service says one. */
  status?: string | undefined;
  /** The checks, kept as sent. */
  [key: string]: unknown;
}
sameType<SystemCheckResponse, z.infer<typeof SystemCheckResponseSchema>>(true);

// ---------------------------------------------------------------- zod issues as FastAPI items

/**
 * Renders a zod path as `a.b[0].c`, or `(root)` when empty.
 *
 * @example
 * formatZodPath(["trajectory_groups", 0, "trajectories"]); // "trajectory_groups[0].trajectories"
 */
export function formatZodPath(path: readonly PropertyKey[]): string {
  checkPath("formatZodPath(path)", "path", path);
  let out = "";
  for (const key of path) {
    if (typeof key === "number") out += `[${key}]`;
    else out += out === "" ? String(key) : `.${String(key)}`;
  }
  return out === "" ? "(root)" : out;
}

/**
 * Turns a zod error into FastAPI-style `{loc, msg, type}` items, `loc` starting
 * with where the value came from (`"body"`, `"query"` or `"path"`).
 *
 * @example
 * const r = LogParamsSchema.safeParse(body);
 * if (!r.success) reply(422, { detail: zodIssuesToValidationItems(r.error, "body") });
 */
export function zodIssuesToValidationItems(
  error: z.ZodError,
  location: "body" | "query" | "path",
): ValidationErrorItem[] {
  const call = "zodIssuesToValidationItems(error, location)";
  const issues = (error as { issues?: unknown } | null)?.issues;
  if (!Array.isArray(issues))
    throw new InvalidArgumentError(call, "error", "a ZodError (an object with issues)", error);
  if (location !== "body" && location !== "query" && location !== "path")
    throw new InvalidArgumentError(call, "location", '"body", "query" or "path"', location);
  issues.forEach((issue: unknown, i) => {
    if (!isObjectLike(issue) || typeof issue.message !== "string")
      throw new InvalidArgumentError(call, `error.issues[${i}]`, "a zod issue", issue);
    checkPath(call, `error.issues[${i}].path`, issue.path);
  });
  return error.issues.map((issue) => ({
    loc: [location, ...issue.path.map((k) => (typeof k === "number" ? k : String(k)))],
    msg: issue.message,
    type: issueType(issue),
  }));
}

// Keys only: an object in a path would be stringified, without bound for a deep one.
function checkPath(call: string, name: string, path: unknown): asserts path is PropertyKey[] {
  if (!Array.isArray(path))
    throw new InvalidArgumentError(call, name, "an array of keys (strings, numbers)", path);
  for (let i = 0; i < path.length; i++) {
    const key: unknown = path[i];
    if (typeof key !== "string" && typeof key !== "number" && typeof key !== "symbol")
      throw new InvalidArgumentError(call, `${name}[${i}]`, "a string, number or symbol key", key);
  }
}

function issueType(issue: z.core.$ZodIssue): string {
  if (issue.code === "invalid_type" && /received undefined/.test(issue.message)) return "missing";
  if (issue.code === "unrecognized_keys") return "extra_forbidden";
  return issue.code;
}
