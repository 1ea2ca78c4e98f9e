// Argument parsing on node:util's parseArgs, with the global options merged
// in and a usage error (exit 2) for anything it refuses.
import { parseArgs } from "node:util";
import { COMMON_OPTIONS, type Options, SERVICE_OPTIONS, UsageError } from "./context.js";

/** Parsed options: strings, booleans and lists of strings, by long name. */
export interface Parsed {
  values: Values;
  positionals: string[];
}
export type Values = Record<string, string | boolean | string[] | undefined> & {
  help?: boolean;
  json?: boolean;
  "base-url"?: string;
  "api-key-file"?: string;
};

/**
 * Parses `args` against `options` plus the common ones (and, unless
 * `service: false`, the service's); throws UsageError.
 */
export function parse(
  args: string[],
  options: Options,
  positionals: { min: number; max: number; names: string },
  { service = true }: { service?: boolean } = {},
): Parsed {
  let parsed: Parsed;
  try {
    parsed = parseArgs({
      args,
      options: { ...COMMON_OPTIONS, ...(service ? SERVICE_OPTIONS : {}), ...options },
      allowPositionals: true,
      strict: true,
    }) as Parsed;
  } catch (error) {
    throw new UsageError(parseArgsMessage(error as Error & { code?: string }));
  }
  const n = parsed.positionals.length;
  if (!parsed.values.help && n < positionals.min) {
    throw new UsageError(
      n === 0
        ? `missing ${positionals.names}.`
        : `missing arguments: expected ${positionals.names}, got only ${parsed.positionals.join(" ")}.`,
    );
  }
  if (!parsed.values.help && n > positionals.max) {
    throw new UsageError(
      positionals.max === 0
        ? `takes no arguments; got ${parsed.positionals.join(" ")}.`
        : `too many arguments: expected ${positionals.names}, got ${parsed.positionals.join(" ")}.`,
    );
  }
  return parsed;
}

/** An option that must be a number within bounds; names the option when not. */
export function numberOption(
  name: string,
  value: string | undefined,
  check: { integer?: boolean; min?: number; positive?: boolean } = {},
): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  const ok =
    value.trim() !== "" &&
    Number.isFinite(n) &&
    (!check.integer || Number.isInteger(n)) &&
    (check.min === undefined || n >= check.min) &&
    (!check.positive || n > 0);
  if (!ok) {
    const what = check.integer ? "an integer" : "a number";
    const bound = check.positive
      ? " above 0"
      : check.min !== undefined
        ? ` of at least ${check.min}`
        : "";
    throw new UsageError(`--${name} must be ${what}${bound}; got ${JSON.stringify(value)}.`);
  }
  return n;
}

/** A string option, or undefined. */
export function str(values: Values, name: string): string | undefined {
  const v = values[name];
  return typeof v === "string" ? v : undefined;
}

/** A string option that must be given. */
export function required(values: Values, name: string): string {
  const v = str(values, name);
  if (v === undefined || v === "") throw new UsageError(`--${name} is required.`);
  return v;
}

/** node:util's parseArgs errors, said in our words (its own quote unevenly and speak of its API). */
function parseArgsMessage(error: Error & { code?: string }): string {
  // "'-y, --yes'" names the long form second.
  const option = /'(?:-\w, )?(-{1,2}[^'\s<,]+)/.exec(error.message)?.[1];
  switch (error.code) {
    case "ERR_PARSE_ARGS_UNKNOWN_OPTION":
      return `unknown option ${option ?? "(unnamed)"}; a value starting with '-' goes after '--'.`;
    case "ERR_PARSE_ARGS_INVALID_OPTION_VALUE":
      return /does not take an argument/.test(error.message)
        ? `option ${option ?? "(unnamed)"} takes no value.`
        : `option ${option ?? "(unnamed)"} needs a value (one starting with '-' is given as ${option ?? "--option"}=VALUE).`;
    case "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL":
      return "takes no arguments.";
    default:
      return error.message;
  }
}
