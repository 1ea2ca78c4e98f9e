// What every command gets: its parsed options, where to write, and the
// client built from the service options. The exit codes are here, once.
import { readFileSync } from "node:fs";
import type { ParseArgsConfig } from "node:util";
import { TrainingClient } from "../client/index.js";

/**
 * The exit codes of every command (docs/cli.md has the table):
 * 0 it worked; 1 it failed (the service refused, a job failed, no connection);
 * 2 wrong usage (an unknown option, a missing argument, an unreadable file);
 * 3 invalid data (a line of the input file, or groups `train` refuses);
 * 4 not found (the named model, job or checkpoint does not exist).
 */
export const EXIT = { ok: 0, failure: 1, usage: 2, invalidData: 3, notFound: 4 } as const;

/** A mistake in how the command was called: printed with a hint, exit code 2. */
export class UsageError extends Error {
  /** The class's name, `"UsageError"` (what `error.name` reads). */
  override name = "UsageError";
}

/** The input data is not what the command can use: exit code 3. */
export class InvalidDataError extends Error {
  /** The class's name, `"InvalidDataError"` (what `error.name` reads). */
  override name = "InvalidDataError";
}

/** The named model, job or checkpoint does not exist: exit code 4. */
export class NotFoundCliError extends Error {
  /** The class's name, `"NotFoundError"` (what `error.name` reads). */
  override name = "NotFoundError";
}

/** Where a command writes; tests and the entry point pass the process's streams. */
export interface Output {
  stdout: { write(chunk: string): unknown; isTTY?: boolean };
  stderr: { write(chunk: string): unknown; isTTY?: boolean; columns?: number };
  /** Where a confirmation is read from (the process's stdin); absent: not a terminal. */
  stdin?: { isTTY?: boolean };
  /** Asks a yes/no question on a terminal; resolves to the answer. */
  ask?: (question: string) => Promise<string>;
}

export type Options = NonNullable<ParseArgsConfig["options"]>;

/** Options every command accepts. */
export const COMMON_OPTIONS = {
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

/** Options of the commands that talk to the service. */
export const SERVICE_OPTIONS = {
  "base-url": { type: "string" },
  "api-key-file": { type: "string" },
} as const;

export const SERVICE_HELP = `Service options:
  --base-url URL        the service's base URL, ending in /v1
                        (default: $TRAINING_SERVICE_BASE_URL, then https://api.training.wandb.ai/v1)
  --api-key-file PATH   read the API key from this file (default: $WANDB_API_KEY)`;

export const COMMON_HELP = `Common options:
  --json                print the result (or the error) as JSON on stdout
  -h, --help            show help for the command`;

export interface GlobalValues {
  "base-url"?: string | undefined;
  "api-key-file"?: string | undefined;
  json?: boolean | undefined;
}

/**
 * Reads a key from a file: the first non-empty line, trimmed. Never echoes
 * it, nor the path (a key typed where the path goes would be printed).
 */
export function readKeyFile(path: string, option = "--api-key-file"): string {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "unreadable";
    throw new UsageError(
      `the file given to ${option} could not be read (${code}); it takes the path of a file holding the key, not the key itself.`,
    );
  }
  const key = text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .find((l) => l !== "");
  if (!key)
    throw new UsageError(
      `the file given to ${option} is empty; put the API key on its first line.`,
    );
  return key;
}

/** `url` without the user and password it may carry. */
export function withoutCredentials(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@\s]*@/i, "$1");
}

/** The base URL the client uses, as shown and as known models are filed under (no credentials). */
export function serviceUrl(values: GlobalValues): string {
  const url =
    values["base-url"] ??
    process.env.TRAINING_SERVICE_BASE_URL ??
    "https://api.training.wandb.ai/v1";
  return withoutCredentials(url).replace(/\/+$/, "");
}

/** The client of the service options: key from --api-key-file or WANDB_API_KEY. */
export function makeClient(values: GlobalValues): TrainingClient {
  const baseURL = values["base-url"];
  if (baseURL !== undefined && withoutCredentials(baseURL) !== baseURL) {
    throw new UsageError(
      "--base-url holds a user name or password; the service takes the API key (--api-key-file or WANDB_API_KEY), so give the URL without them.",
    );
  }
  const apiKey = values["api-key-file"] ? readKeyFile(values["api-key-file"]) : undefined;
  if (!apiKey && !process.env.WANDB_API_KEY?.trim()) {
    throw new UsageError(
      "No API key: set WANDB_API_KEY or pass --api-key-file PATH (a file holding the key).",
    );
  }
  return new TrainingClient({ apiKey, baseURL });
}

/** Prints `value` as JSON, or `human` as lines, as --json asks. */
export function print(out: Output, json: boolean | undefined, value: unknown, human: string): void {
  out.stdout.write(json ? `${JSON.stringify(value, null, 2)}\n` : `${human}\n`);
}

/** One subcommand: its help and what it does. */
export interface Command {
  /** Words after the program name, e.g. `models create`. */
  name: string;
  summary: string;
  /** Arguments after the name, e.g. `MODEL_ID [--order asc|desc]`. */
  usage: string;
  /** Its options and notes, for `--help`. */
  details: string;
  /** Works without the service: its help lists no service options. */
  offline?: boolean;
  /** Runs it; resolves to the exit code, or -1 to keep the process running (a server). */
  run(args: string[], out: Output): Promise<number>;
}
