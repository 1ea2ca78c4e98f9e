// Reads an OpenAI fine-tuning JSONL file a line at a time (node:readline over
// a stream), so a file of gigabytes costs the memory of its longest line.
import { once } from "node:events";
import { open } from "node:fs/promises";
import { resolve } from "node:path";
import { createInterface } from "node:readline";
import type { Readable, Writable } from "node:stream";
import { InvalidArgumentError } from "../util/argument-error.js";
import { type ConvertOptions, convertLine, type LineStatus, type SftRow } from "./convert.js";

/** What became of one line of the file, numbered from 1. */
export interface ImportedLine {
  /** Its number in the file, from 1. */
  line: number;
  /** What became of it. */
  status: LineStatus;
  /** What was changed, or why a preference example was not converted. */
  changes: string[];
  /** `path: problem` for each reason of a refusal. */
  errors: string[];
  /** The SFT row (accepted and converted lines). */
  row?: SftRow;
}

/** The counts of a whole file: every line is in exactly one of the four. */
export interface ImportSummary {
  /** Lines read. */
  lines: number;
  /** Lines written as they were. */
  accepted: number;
  /** Lines written with changes (each said in its report). */
  converted: number;
  /** Lines not written, each with the field paths of its problems. */
  refused: number;
  /** Preference (DPO) lines counted and not written (no `preferredAsSft`). */
  preference: number;
  /** SFT rows written. */
  rows: number;
}

/** Options of {@link importOpenAiFt}. */
export interface ImportOptions extends ConvertOptions {
  /** Called with every line's outcome, in order (the row left out). */
  onLine?(line: Omit<ImportedLine, "row">): void;
}

/**
 * Yields each line of an OpenAI fine-tuning file (a path or a readable
 * stream) converted, one at a time: accepted, converted (with what changed),
 * a preference example, or refused (with the field paths).
 *
 * @example
 * for await (const l of readOpenAiFt("train.jsonl")) if (l.status === "refused") console.log(l.line, l.errors);
 */
export async function* readOpenAiFt(
  input: string | Readable,
  options: ConvertOptions = {},
): AsyncGenerator<ImportedLine> {
  const stream =
    typeof input === "string" ? await openInput(input, "readOpenAiFt(input, options)") : input;
  const lines = createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY });
  let n = 0;
  try {
    for await (const text of lines) {
      n++;
      yield { line: n, ...convertText(text, options) };
    }
  } finally {
    lines.close();
    if (typeof input === "string") stream.destroy();
  }
}

function convertText(text: string, options: ConvertOptions): Omit<ImportedLine, "line"> {
  if (text.trim() === "")
    return {
      status: "refused",
      changes: [],
      errors: ["(root): expected a JSON object, got an empty line"],
    };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return {
      status: "refused",
      changes: [],
      errors: [`(root): not JSON (${(error as Error).message})`],
    };
  }
  return convertLine(value, options);
}

/**
 * Converts an OpenAI fine-tuning file into the SFT JSONL the service trains
 * on (`model.trainSft`, `trajectory-recorder sft`), streaming both files, and
 * returns the counts; `onLine` hears every line's outcome.
 *
 * @example
 * const summary = await importOpenAiFt("train.jsonl", "rows.jsonl", { onLine: (l) => l.status === "refused" && console.warn(l) });
 */
export async function importOpenAiFt(
  input: string | Readable,
  output: string | Writable,
  options: ImportOptions = {},
): Promise<ImportSummary> {
  const call = "importOpenAiFt(input, output, options)";
  if (typeof input === "string" && typeof output === "string" && resolve(input) === resolve(output))
    throw new InvalidArgumentError(
      call,
      "output",
      "another file than the input",
      output,
      "it is the input file, which writing would destroy",
    );
  // Both opened before a line is read, so a bad path fails at once and leaves nothing half-written.
  const source = typeof input === "string" ? await openInput(input, call) : input;
  const out = typeof output === "string" ? await openOutput(output, call) : output;
  let failed: unknown;
  const onError = (error: unknown) => {
    failed ??= error;
  };
  out.on("error", onError);
  const summary: ImportSummary = {
    lines: 0,
    accepted: 0,
    converted: 0,
    refused: 0,
    preference: 0,
    rows: 0,
  };
  try {
    for await (const { row, ...report } of readOpenAiFt(source, options)) {
      summary.lines++;
      summary[report.status]++;
      options.onLine?.(report);
      if (!row) continue;
      summary.rows++;
      if (failed) throw failed;
      // Waiting for the writer keeps the memory flat when it is slower than the reader.
      if (!out.write(`${JSON.stringify(row)}\n`)) await once(out, "drain");
    }
    if (failed) throw failed;
  } finally {
    out.off("error", onError);
    if (typeof input === "string") source.destroy();
    if (typeof output === "string") {
      out.end();
      if (!out.destroyed) await once(out, "close").catch(() => undefined);
    }
  }
  return summary;
}

async function openInput(path: string, call: string): Promise<Readable> {
  try {
    // The stream owns the handle: it closes it when it ends or is destroyed.
    return (await open(path, "r")).createReadStream();
  } catch (error) {
    throw new InvalidArgumentError(
      call,
      "input",
      "a readable file",
      path,
      `the file ${path} could not be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`,
    );
  }
}

async function openOutput(path: string, call: string): Promise<Writable> {
  try {
    return (await open(path, "w")).createWriteStream();
  } catch (error) {
    throw new InvalidArgumentError(
      call,
      "output",
      "a writable file",
      path,
      `the file ${path} could not be written (${(error as NodeJS.ErrnoException).code ?? String(error)})`,
    );
  }
}
