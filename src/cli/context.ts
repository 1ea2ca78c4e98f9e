// What every command gets: its parsed options, where to write, and the
// client built from the global options. Usage mistakes exit 2, failures 1.
import { readFileSync } from "node:fs";
import { TrainingClient } from "../client/index.js";

/** A mistake in how the command was called: printed with a hint, exit code 2. */
export class UsageError extends Error {
  override name = "UsageError";
}

/** Where a command writes; tests and the entry point pass the process's streams. */
export interface Output {
  stdout: { write(chunk: string): unknown; isTTY?: boolean };
  stderr: { write(chunk: string): unknown; isTTY?: boolean; columns?: number };
}

/** Options every command accepts, besides its own. */
export const GLOBAL_OPTIONS = {
  "base-url": { type: "string" },
  "api-key-file": { type: "string" },
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

export const GLOBAL_HELP = `Global options:
  --base-url URL        the service's base URL, ending in /v1
                        (default: $TRAINING_SERVICE_BASE_URL, then https://api.training.wandb.ai/v1)
  --api-key-file PATH   read the API key from this file (default: $WANDB_API_KEY)
  --json                print the result as JSON on stdout
  -h, --help            show help for the command`;

export interface GlobalValues {
  "base-url"?: string | undefined;
  "api-key-file"?: string | undefined;
  json?: boolean | undefined;
}

/** Reads a key from a file: the first non-empty line, trimmed. Never echoes it. */
export function readKeyFile(path: string, option = "--api-key-file"): string {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "unreadable";
    throw new UsageError(`${option} ${path} could not be read (${code}).`);
  }
  const key = text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .find((l) => l !== "");
  if (!key) throw new UsageError(`${option} ${path} is empty; put the API key on its first line.`);
  return key;
}

/** The client of the global options: key from --api-key-file or WANDB_API_KEY. */
export function makeClient(values: GlobalValues): TrainingClient {
  const apiKey = values["api-key-file"] ? readKeyFile(values["api-key-file"]) : undefined;
  if (!apiKey && !process.env.WANDB_API_KEY?.trim()) {
    throw new UsageError(
      "No API key: set WANDB_API_KEY or pass --api-key-file PATH (a file holding the key).",
    );
  }
  return new TrainingClient({ apiKey, baseURL: values["base-url"] });
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
  /** Runs it; resolves to the exit code, or -1 to keep the process running (a server). */
  run(args: string[], out: Output): Promise<number>;
}
