// Reads an OpenAI fine-tuning JSONL file a line at a time (node:readline over
// a stream), so a file of gigabytes costs the memory of its longest line.
import { once } from "node:events";
import { createReadStream, createWriteStream } from "node:fs";
import { createInterface } from "node:readline";
import type { Readable, Writable } from "node:stream";
import { type ConvertOptions, convertLine, type LineStatus, type SftRow } from "./convert.js";

/** What became of one line of the file, numbered from 1. */
export interface ImportedLine {
  line: number;
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
  lines: number;
  accepted: number;
  converted: number;
  refused: number;
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
  const stream = typeof input === "string" ? createReadStream(input) : input;
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
  const out = typeof output === "string" ? createWriteStream(output) : output;
  const summary: ImportSummary = {
    lines: 0,
    accepted: 0,
    converted: 0,
    refused: 0,
    preference: 0,
    rows: 0,
  };
  try {
    for await (const { row, ...report } of readOpenAiFt(input, options)) {
      summary.lines++;
      summary[report.status]++;
      options.onLine?.(report);
      if (!row) continue;
      summary.rows++;
      // Waiting for the writer keeps the memory flat when it is slower than the reader.
      if (!out.write(`${JSON.stringify(row)}\n`)) await once(out, "drain");
    }
  } finally {
    if (typeof output === "string") {
      out.end();
      await once(out, "close");
    }
  }
  return summary;
}
