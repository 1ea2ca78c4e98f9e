// Reading and locking the CLI's state file (known.json): the file is shared
// by every CLI process of the user, so a save holds a lock file beside it
// (created exclusively, naming its process) while it reads, merges and
// replaces the file. A lock whose process is gone, or that is older than any
// save takes, is taken over.
import { constants } from "node:fs";
import { mkdir, open, readFile, rm, stat } from "node:fs/promises";
import { homedir } from "node:os";
import path from "node:path";
import type { z } from "zod";
import { errorMessage } from "../util/error-message.js";

/** Where the file lives: $TRAJECTORY_RECORDER_STATE_DIR, else $XDG_STATE_HOME/trajectory-recorder, else ~/.local/state/trajectory-recorder. */
export function knownFilePath(): string {
  const dir =
    process.env.TRAJECTORY_RECORDER_STATE_DIR ||
    path.join(
      process.env.XDG_STATE_HOME || path.join(homedir(), ".local", "state"),
      "trajectory-recorder",
    );
  return path.join(dir, "known.json");
}

/** The file's content (undefined: no file yet), or why it cannot be used. */
export type KnownRead<T> =
  | { value: T | undefined; problem?: undefined }
  | { value?: undefined; problem: string };

/** Reads and checks the file without ever blocking on it (a FIFO in its place, say). */
export async function readKnownFile<T>(file: string, schema: z.ZodType<T>): Promise<KnownRead<T>> {
  let text: string;
  try {
    // Non-blocking: opening a FIFO for reading would wait for a writer.
    const handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      const info = await handle.stat();
      if (!info.isFile()) return { problem: `it is ${kindOfEntry(info)}, not a regular file` };
      text = await handle.readFile("utf8");
    } finally {
      await handle.close();
    }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return { value: undefined };
    if (code === "ENOTDIR")
      return { problem: `a part of its directory, ${path.dirname(file)}, is a file` };
    if (code === "EISDIR") return { problem: "it is a directory, not a regular file" };
    return { problem: `it cannot be read (${errorMessage(error)})` };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return { problem: `it is not valid JSON (${errorMessage(error)})` };
  }
  const parsed = schema.safeParse(json);
  if (parsed.success) return { value: parsed.data };
  const issue = parsed.error.issues[0];
  const where = issue?.path.length ? issue.path.map(String).join(".") : "the top level";
  return {
    problem: `it does not hold what the CLI writes (${where}: ${issue?.message ?? "invalid"})`,
  };
}

function kindOfEntry(info: {
  isFIFO(): boolean;
  isDirectory(): boolean;
  isSocket(): boolean;
}): string {
  if (info.isFIFO()) return "a FIFO";
  if (info.isDirectory()) return "a directory";
  if (info.isSocket()) return "a socket";
  return "a device";
}

/** How long a save waits for another process's lock before giving up. */
const LOCK_WAIT_MS = 10_000;
/** A lock older than this is left over (a save takes milliseconds): taken over. */
const LOCK_STALE_MS = 30_000;

/** Runs `fn` while holding the file's lock (`<file>.lock`), made exclusively. */
export async function withKnownLock<T>(file: string, fn: () => Promise<T>): Promise<T> {
  const dir = path.dirname(file);
  try {
    await mkdir(dir, { recursive: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EEXIST" || code === "ENOTDIR")
      throw new Error(`the state directory ${dir} (or a part of it) is a file, not a directory`);
    throw error;
  }
  const lock = `${file}.lock`;
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    if (await tryLock(lock)) break;
    const holder = await lockHolder(lock);
    if (holder === "gone") continue;
    if (holder.stale) {
      await rm(lock, { force: true });
      continue;
    }
    if (Date.now() > deadline)
      throw new Error(
        `${lock} stayed locked by process ${holder.pid ?? "?"} for ${LOCK_WAIT_MS / 1000} s`,
      );
    await new Promise((r) => setTimeout(r, 5 + Math.random() * 20));
  }
  try {
    return await fn();
  } finally {
    await rm(lock, { force: true });
  }
}

async function tryLock(lock: string): Promise<boolean> {
  try {
    const handle = await open(lock, "wx");
    try {
      await handle.writeFile(`${process.pid}\n`);
    } finally {
      await handle.close();
    }
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  }
}

/** Who holds the lock, and whether it is left over; "gone" if it was just released. */
async function lockHolder(lock: string): Promise<"gone" | { pid?: number; stale: boolean }> {
  try {
    const [info, text] = await Promise.all([stat(lock), readFile(lock, "utf8")]);
    const pid = Number.parseInt(text, 10);
    // A lock being written has no pid yet: only its age can make it stale.
    const known = Number.isInteger(pid) && pid > 0;
    const old = Date.now() - info.mtimeMs > LOCK_STALE_MS;
    return { pid: known ? pid : undefined, stale: old || (known && !alive(pid)) };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return "gone";
    throw error;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
