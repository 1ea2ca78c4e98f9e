// The lock file: one writer per store directory. It holds the writer's pid
// and host; a lock whose pid no longer runs on this host is stale and taken over.
import { closeSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { hostname } from "node:os";
import path from "node:path";
import { StoreLockedError } from "./errors.js";

const LOCK = "LOCK";

type Holder = { pid: number | null; host: string | null };

function readHolder(file: string): Holder | undefined {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  try {
    const data = JSON.parse(text) as { pid?: unknown; host?: unknown };
    return {
      pid: Number.isInteger(data.pid) ? (data.pid as number) : null,
      host: typeof data.host === "string" ? data.host : null,
    };
  } catch {
    return { pid: null, host: null };
  }
}

function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it runs, under another user.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Takes the lock of `dir`, or throws `StoreLockedError` naming the holder.
 * Returns the function that releases it.
 */
export function acquireLock(dir: string): () => void {
  const file = path.join(dir, LOCK);
  const me = JSON.stringify({
    pid: process.pid,
    host: hostname(),
    since: new Date().toISOString(),
  });
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(file, "wx");
      try {
        writeSync(fd, me);
      } finally {
        closeSync(fd);
      }
      return () => rmSync(file, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    const holder = readHolder(file);
    if (holder === undefined) continue; // released meanwhile
    const sameHost = holder.host === null || holder.host === hostname();
    // A lock that cannot be read is one a process died writing (it is written
    // in one call of a few dozen bytes); a pid of ours is another store here.
    const stale =
      holder.pid === null || (sameHost && holder.pid !== process.pid && !running(holder.pid));
    if (!stale) throw new StoreLockedError(dir, holder.pid, holder.host);
    rmSync(file, { force: true });
  }
  throw new StoreLockedError(dir, readHolder(file)?.pid ?? null, null);
}
