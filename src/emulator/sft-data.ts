// Reading an SFT job's `training_data_url`: file:// only inside the directory
// the operator named, http(s) only when the operator turned fetching on, both
// with a size cap. Failures share one message per kind of URL, so a caller
// cannot learn whether a path exists, is a directory or holds something else.
import { constants } from "node:fs";
import { open, realpath, stat } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { readBodyCapped } from "../util/index.js";

/** Default size cap of training data, read from a file or fetched. */
export const DEFAULT_TRAINING_DATA_MAX_BYTES = 64 * 1024 * 1024;
/** Default time allowed for fetching training data. */
export const DEFAULT_TRAINING_DATA_TIMEOUT_MS = 30_000;

/** What an SFT job may read, resolved from the emulator's options. */
export interface TrainingDataAccess {
  /** Directory `file://` URLs must point into; undefined refuses every file URL. */
  dir: string | undefined;
  /** Fetching of http(s) URLs; undefined refuses them. */
  fetch: { maxBytes: number; timeoutMs: number } | undefined;
  /** Size cap of a file read from `dir`. */
  maxFileBytes: number;
}

/** The training data could not be used; `message` is safe to show the caller. */
export class TrainingDataError extends Error {}

type Row = Record<string, unknown> & { messages: Record<string, unknown>[] };

const UNREADABLE_FILE =
  "Could not read training_data_url: it must name a JSONL file (one object with a messages array per line) inside the emulator's SFT data directory.";

/**
 * Says, at start, when the SFT data directory does not exist (or is not a
 * directory), so that a mistyped path shows at once rather than at the first
 * SFT job. A warning, not a refusal: an uploader may create it later.
 */
export async function checkSftDataDir(
  dir: string | undefined,
  warn: (message: string) => void,
): Promise<void> {
  if (dir === undefined) return;
  let isDirectory: boolean;
  try {
    isDirectory = (await stat(dir)).isDirectory();
  } catch {
    warn(
      `sftDataDir ${dir} does not exist (yet): SFT jobs with a file:// training_data_url fail until it does. Create it, or name the directory that holds the SFT training data (CLI --sft-data-dir).`,
    );
    return;
  }
  if (!isDirectory)
    warn(
      `sftDataDir ${dir} is not a directory: SFT jobs with a file:// training_data_url will fail.`,
    );
}

/** The JSONL rows at `url`, each with a `messages` array. */
export async function loadTrainingRows(
  url: string,
  access: TrainingDataAccess,
  readArtifact?: (url: string) => { text: string } | { error: string },
): Promise<Row[]> {
  if (url.startsWith("wandb-artifact:///") && readArtifact) {
    const found = readArtifact(url);
    if ("error" in found)
      throw new TrainingDataError(`Could not read training_data_url: ${found.error}`);
    const rows = parseRows(found.text);
    if (!rows)
      throw new TrainingDataError(
        "Could not read training_data_url: the artifact's file is not JSONL with a messages array per line.",
      );
    return rows;
  }
  if (url.startsWith("file://")) {
    if (!access.dir) {
      throw new TrainingDataError(
        "training_data_url is a file:// URL, but this emulator reads no local files: start it with sftDataDir (CLI --sft-data-dir) naming the directory that holds the training data.",
      );
    }
    const text = await readConfined(url, access.dir, access.maxFileBytes);
    const rows = text === undefined ? undefined : parseRows(text);
    if (!rows) throw new TrainingDataError(UNREADABLE_FILE);
    return rows;
  }
  if (/^https?:\/\//i.test(url)) {
    if (!access.fetch) {
      throw new TrainingDataError(
        "training_data_url is an http(s) URL, but this emulator fetches no URLs: start it with fetchTrainingData (CLI --fetch-training-data) to allow it.",
      );
    }
    const text = await fetchCapped(url, access.fetch.maxBytes, access.fetch.timeoutMs);
    const rows = text === undefined ? undefined : parseRows(text);
    if (!rows) {
      throw new TrainingDataError(
        `Could not read training_data_url: fetching it failed, was redirected, took over ${access.fetch.timeoutMs} ms, answered more than ${access.fetch.maxBytes} bytes or a status other than 2xx, or its body was not JSONL with a messages array per line.`,
      );
    }
    return rows;
  }
  throw new TrainingDataError(
    `training_data_url must be a wandb-artifact:///, file:// or http(s):// URL in the emulator; got ${JSON.stringify(url.slice(0, 200))}.`,
  );
}

/** The file's text, or undefined for any reason at all it cannot be read from inside `dir`. */
async function readConfined(
  url: string,
  dir: string,
  maxBytes: number,
): Promise<string | undefined> {
  try {
    const root = await realpath(dir);
    // realpath resolves symlinks, so a link inside the directory cannot lead out of it.
    const file = await realpath(fileURLToPath(url));
    const rel = path.relative(root, file);
    if (rel === "" || rel.startsWith("..") || path.isAbsolute(rel)) return undefined;
    // A FIFO or device would block the read (opening a FIFO waits for a writer):
    // only a regular file is opened, and without blocking in case it was swapped.
    if (!(await stat(file)).isFile()) return undefined;
    const handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      const stat = await handle.stat();
      if (!stat.isFile() || stat.size > maxBytes) return undefined;
      return await handle.readFile("utf8");
    } finally {
      await handle.close();
    }
  } catch {
    return undefined;
  }
}

/** The body as text, or undefined on any failure, redirect, non-2xx, timeout or excess size. */
async function fetchCapped(
  url: string,
  maxBytes: number,
  timeoutMs: number,
): Promise<string | undefined> {
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    const res = await fetch(url, { redirect: "error", signal });
    if (!res.ok || !res.body) {
      await res.body?.cancel();
      return undefined;
    }
    // Nothing past the cap is read: the connection is dropped.
    return (await readBodyCapped(res, maxBytes))?.toString("utf8");
  } catch {
    return undefined;
  }
}

function parseRows(text: string): Row[] | undefined {
  const rows: Row[] = [];
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    let row: unknown;
    try {
      row = JSON.parse(line);
    } catch {
      return undefined;
    }
    if (!row || typeof row !== "object" || !Array.isArray((row as Row).messages)) return undefined;
    rows.push(row as Row);
  }
  return rows;
}
