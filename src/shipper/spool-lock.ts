// The lock that keeps a spool directory to one shipper: two would replay and
// ship the same groups. The lock is a file naming the process that holds it.
// It appears whole or not at all (hard-linked from a finished temporary file),
// is removed on release and when the process exits, and a lock whose process
// is gone (killed, crashed) is taken over by the next shipper.
//
// It is taken with synchronous calls so that the shipper's constructor can
// throw: a shipper that cannot lock never accepts a group.
import { linkSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import path from "node:path";
import { tempSibling } from "../util/atomic-write.js";
import { SpoolLockedError, type SpoolLockHolder } from "./errors.js";

/** The lock file's name inside the spool directory. */
const LOCK_FILE = "shipper.lock";

interface LockRecord extends SpoolLockHolder {
  /**
   * The holder's `performance.timeOrigin`. With the pid it names one process:
   * a lock with this process's pid but another start was left by an earlier
   * process that had the same pid (a restarted container's pid 1, say).
   */
  processStart: number;
}

/** The lock on a spool directory, held until `release`. */
export class SpoolLock {
  readonly file: string;
  /** The holder of a lock left by a process that is gone, which this one took over. */
  readonly tookOverFrom: SpoolLockHolder | undefined;
  readonly #me: LockRecord;
  readonly #onExit = () => this.release();
  #held = true;

  private constructor(file: string, me: LockRecord, tookOverFrom: LockRecord | undefined) {
    this.file = file;
    this.#me = me;
    this.tookOverFrom = tookOverFrom && { pid: tookOverFrom.pid, host: tookOverFrom.host };
    // Without this, a process that ends without close() would leave the lock
    // for the next start to take over (and to log).
    process.on("exit", this.#onExit);
  }

  /**
   * Locks `dir` (creating it) for this process, taking over a lock whose
   * process is gone; throws {@link SpoolLockedError} while another holds it.
   */
  static acquire(dir: string): SpoolLock {
    mkdirSync(dir, { recursive: true });
    const file = path.join(dir, LOCK_FILE);
    const me: LockRecord = {
      pid: process.pid,
      host: hostname(),
      processStart: performance.timeOrigin,
    };
    let tookOverFrom: LockRecord | undefined;
    // Each turn takes the lock, throws, or finds that the lock changed hands
    // (released, or taken over by another shipper starting at the same time).
    for (;;) {
      if (create(file, me)) return new SpoolLock(file, me, tookOverFrom);
      const holder = read(file);
      if (holder === "gone") continue;
      if (holder === undefined || isLive(holder)) {
        throw new SpoolLockedError(dir, file, holder && { pid: holder.pid, host: holder.host });
      }
      if (moveAside(file, holder)) tookOverFrom = holder;
    }
  }

  /** Removes the lock file, if it is still this process's own. Safe to call twice. */
  release(): void {
    if (!this.#held) return;
    this.#held = false;
    process.off("exit", this.#onExit);
    try {
      if (heldBy(this.file, this.#me)) rmSync(this.file, { force: true });
    } catch {
      // Left behind, the lock names a process that is gone by the next start, which takes it over.
    }
  }
}

// Creates the lock file with `record` unless it exists.
function create(file: string, record: LockRecord): boolean {
  const data = JSON.stringify(record);
  const tmp = tempSibling(file);
  writeFileSync(tmp, data);
  try {
    linkSync(tmp, file);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // ENOENT: the holder's start-up removed our temporary file as a leftover.
    if (code === "EEXIST" || code === "ENOENT") return false;
    if (code === "EPERM" || code === "ENOTSUP" || code === "EOPNOTSUPP" || code === "ENOSYS") {
      // A filesystem without hard links. A lock seen there half-written
      // cannot be read, which refuses the directory: the safe side.
      return createWithoutLink(file, data);
    }
    throw error;
  } finally {
    rmSync(tmp, { force: true });
  }
}

function createWithoutLink(file: string, data: string): boolean {
  try {
    writeFileSync(file, data, { flag: "wx" });
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  }
}

// The lock's holder; "gone" if there is no lock file, undefined if it cannot be read.
function read(file: string): LockRecord | "gone" | undefined {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT" ? "gone" : undefined;
  }
  try {
    const { pid, host, processStart } = JSON.parse(text) as Partial<LockRecord>;
    // A pid of 0 or below would make process.kill signal a whole group.
    const validPid = typeof pid === "number" && Number.isInteger(pid) && pid > 0;
    if (!validPid || typeof host !== "string") return undefined;
    return { pid, host, processStart: Number(processStart) };
  } catch {
    return undefined;
  }
}

function isLive(holder: LockRecord): boolean {
  if (holder.host !== hostname()) return true; // another host's processes cannot be checked
  if (holder.pid === process.pid) return holder.processStart === performance.timeOrigin;
  try {
    process.kill(holder.pid, 0);
    return true;
  } catch (error) {
    // EPERM: it runs, as another user.
    return (error as NodeJS.ErrnoException).code !== "ESRCH";
  }
}

// Moves a stale lock out of the way. Another shipper starting at the same
// time may have replaced it already: a lock that is not the stale one is put
// back and this turn takes nothing.
function moveAside(file: string, stale: LockRecord): boolean {
  const aside = tempSibling(file);
  try {
    renameSync(file, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw error;
  }
  const wasStale = heldBy(aside, stale);
  if (!wasStale) {
    try {
      linkSync(aside, file);
    } catch {
      // A third shipper took the lock in that instant; it holds it now.
    }
  }
  rmSync(aside, { force: true });
  return wasStale;
}

// Whether the lock file `file` names the process `holder` names.
function heldBy(file: string, holder: LockRecord): boolean {
  const found = read(file);
  if (found === "gone" || found === undefined) return false;
  return (
    found.pid === holder.pid &&
    found.host === holder.host &&
    found.processStart === holder.processStart
  );
}
