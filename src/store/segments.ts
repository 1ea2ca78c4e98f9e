// The segment files: `seg-000001.jsonl`, ... Appends go to the highest one,
// through an fd opened for append, one `writeSync` per record: once it
// returns, the bytes are in the kernel's page cache and survive the death of
// the process (not of the machine: that takes an fsync).
import {
  closeSync,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  rmSync,
  writeSync,
} from "node:fs";
import path from "node:path";
import type { Location } from "./records.js";

const NAME = /^seg-(\d{6,})\.jsonl$/;
const NEWLINE = 0x0a;

/** The file name of segment `n`. */
export const segmentName = (n: number) => `seg-${String(n).padStart(6, "0")}.jsonl`;

/** The numbers of the segments in `dir`, ascending. */
export function listSegments(dir: string): number[] {
  return readdirSync(dir)
    .map((name) => NAME.exec(name))
    .filter((m) => m !== null)
    .map((m) => Number(m[1]))
    .sort((a, b) => a - b);
}

/** What reading a segment found besides its records. */
export type ScanResult = {
  /** Its size after a torn tail was cut. */
  size: number;
  /** Bytes cut from its end: a record whose write was cut short. */
  truncated: number;
  /** Whole lines in the middle that are not JSON (damage from outside), skipped. */
  skipped: number;
};

/**
 * Reads every record of segment `n`, in order. A last line without its
 * newline, or that is not JSON, is a write cut short: it is cut from the file
 * (never read as data), so appends continue after the last whole record.
 */
export function scanSegment(
  dir: string,
  n: number,
  onRecord: (record: unknown, at: Location) => void,
): ScanResult {
  const file = path.join(dir, segmentName(n));
  const bytes = readFileSync(file);
  let start = 0;
  let skipped = 0;
  let end = bytes.length;
  while (start < bytes.length) {
    const newline = bytes.indexOf(NEWLINE, start);
    if (newline === -1) break;
    let record: unknown;
    try {
      record = JSON.parse(bytes.toString("utf8", start, newline));
    } catch {
      record = undefined;
    }
    if (record !== null && typeof record === "object") {
      onRecord(record, { seg: n, off: start, len: newline + 1 - start });
    } else if (bytes.indexOf(NEWLINE, newline + 1) === -1) {
      // The last whole line is not JSON: cut it with the rest of the tail.
      end = start;
      break;
    } else skipped++;
    start = newline + 1;
  }
  if (start < bytes.length && end === bytes.length) end = start;
  const truncated = bytes.length - end;
  if (truncated > 0) {
    const fd = openSync(file, "r+");
    try {
      ftruncateSync(fd, end);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  }
  return { size: end, truncated, skipped };
}

/**
 * The open segment files: one for appending (the highest), and read
 * descriptors opened on demand for reading records back.
 */
export class Segments {
  readonly dir: string;
  private readonly rollBytes: number;
  private readonly syncEach: boolean;
  private readonly sizes = new Map<number, number>();
  private readonly readers = new Map<number, number>();
  private active = 0;
  private fd = -1;
  /** The bytes of every segment together. */
  total = 0;

  constructor(dir: string, sizes: Map<number, number>, rollBytes: number, syncEach: boolean) {
    this.dir = dir;
    this.rollBytes = rollBytes;
    this.syncEach = syncEach;
    for (const [n, size] of sizes) {
      this.sizes.set(n, size);
      this.total += size;
    }
    const highest = Math.max(0, ...sizes.keys());
    this.openActive(highest === 0 ? 1 : highest);
  }

  /** The segment appends go to. */
  get activeSegment(): number {
    return this.active;
  }

  /** The bytes in the segment appends go to. */
  get activeSize(): number {
    return this.sizes.get(this.active) ?? 0;
  }

  /** The bytes in segment `n`. */
  sizeOf(n: number): number {
    return this.sizes.get(n) ?? 0;
  }

  /** The segments, ascending. */
  numbers(): number[] {
    return [...this.sizes.keys()].sort((a, b) => a - b);
  }

  private openActive(n: number): void {
    if (this.fd !== -1) {
      fsyncSync(this.fd);
      closeSync(this.fd);
    }
    this.fd = openSync(path.join(this.dir, segmentName(n)), "a");
    this.active = n;
    const size = fstatSync(this.fd).size;
    this.total += size - (this.sizes.get(n) ?? 0);
    this.sizes.set(n, size);
  }

  /** Starts a new segment for the appends that follow. */
  roll(): void {
    this.openActive(this.active + 1);
  }

  /** Appends one line (a record and its newline); when it returns the line survives a kill. */
  append(line: Buffer): Location {
    let size = this.sizes.get(this.active) ?? 0;
    if (size > 0 && size + line.length > this.rollBytes) {
      this.roll();
      size = 0;
    }
    let written = 0;
    try {
      while (written < line.length) written += writeSync(this.fd, line, written);
      if (this.syncEach) fsyncSync(this.fd);
    } catch (error) {
      // A write that failed midway (a full disk) leaves part of a line: cut
      // it, so the next record does not start glued to it. Best effort.
      if (written > 0) {
        try {
          ftruncateSync(this.fd, size);
        } catch {}
      }
      throw error;
    }
    this.sizes.set(this.active, size + line.length);
    this.total += line.length;
    return { seg: this.active, off: size, len: line.length };
  }

  /** Reads the bytes at `at` back. */
  read(at: Location): Buffer {
    let fd = this.readers.get(at.seg);
    if (fd === undefined) {
      fd = openSync(path.join(this.dir, segmentName(at.seg)), "r");
      this.readers.set(at.seg, fd);
    }
    const out = Buffer.allocUnsafe(at.len);
    let got = 0;
    while (got < at.len) {
      const n = readSync(fd, out, got, at.len - got, at.off + got);
      if (n === 0)
        throw new Error(`Segment ${segmentName(at.seg)} ends before ${at.off + at.len}.`);
      got += n;
    }
    return out;
  }

  /** Deletes segment `n` (never the active one). */
  remove(n: number): void {
    const fd = this.readers.get(n);
    if (fd !== undefined) closeSync(fd);
    this.readers.delete(n);
    rmSync(path.join(this.dir, segmentName(n)), { force: true });
    this.total -= this.sizes.get(n) ?? 0;
    this.sizes.delete(n);
  }

  /** Makes every appended byte durable on disk. */
  sync(): void {
    if (this.fd !== -1) fsyncSync(this.fd);
  }

  /** Syncs and closes every descriptor. */
  close(): void {
    for (const fd of this.readers.values()) closeSync(fd);
    this.readers.clear();
    if (this.fd !== -1) {
      fsyncSync(this.fd);
      closeSync(this.fd);
      this.fd = -1;
    }
  }
}

/** Makes the directory's entries (a new or deleted segment) durable; best effort. */
export function syncDir(dir: string): void {
  try {
    const fd = openSync(dir, "r");
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    // Some filesystems refuse fsync on a directory.
  }
}
