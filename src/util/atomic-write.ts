import { randomBytes } from "node:crypto";
import { mkdir, open, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";

/**
 * A fresh name for a temporary file beside `file`: hidden, with a random part,
 * ending in `.tmp`. A write counts only once such a file is renamed into
 * place, so one a killed process left behind holds nothing that was kept.
 */
export function tempSibling(file: string): string {
  return path.join(
    path.dirname(file),
    `.${path.basename(file)}.${randomBytes(6).toString("hex")}.tmp`,
  );
}

/** Whether a file name is one that {@link tempSibling} makes. */
export function isTempName(name: string): boolean {
  return /^\..+\.[0-9a-f]{12}\.tmp$/.test(name);
}

/**
 * Writes `data` to `file` so that a reader (or a process restarted after a
 * crash) sees either the old content or the new, never a torn file: the bytes
 * go to a temporary sibling, are flushed to disk, and the sibling is renamed
 * over the target, which POSIX makes atomic within one directory.
 */
export async function atomicWriteFile(
  file: string,
  data: string | Uint8Array | readonly Uint8Array[],
): Promise<void> {
  const dir = path.dirname(file);
  await mkdir(dir, { recursive: true });
  const tmp = tempSibling(file);
  const handle = await open(tmp, "w");
  try {
    // Pieces are written one after the other (fs writeFile takes an iterable),
    // never joined into one copy.
    await writeFile(handle, data);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await rename(tmp, file);
  } catch (error) {
    await rm(tmp, { force: true });
    throw error;
  }
  // Persist the rename itself; some filesystems do not support fsync on a directory.
  try {
    const dirHandle = await open(dir, "r");
    try {
      await dirHandle.sync();
    } finally {
      await dirHandle.close();
    }
  } catch {
    // best effort
  }
}
