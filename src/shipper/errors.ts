// Errors of the shipper.
import { hostname } from "node:os";
import { markError, TrajectoryRecorderError } from "../util/error-family.js";

/** The process holding a spool directory's lock, as its lock file names it. */
export interface SpoolLockHolder {
  /** Its process id. */
  pid: number;
  /** The host it runs on. */
  host: string;
}

/**
 * Another shipper holds the spool directory: two shippers on one directory
 * would replay and ship the same groups. Thrown by the `TrajectoryShipper`
 * constructor, so no group can be handed to a shipper that cannot keep it.
 *
 * @example
 * try { shipper = new TrajectoryShipper({ model, spoolDir }); } catch (err) { if (err instanceof SpoolLockedError) console.error(err.dir, err.holder?.pid); }
 */
export class SpoolLockedError extends TrajectoryRecorderError {
  static {
    markError(SpoolLockedError, "SpoolLockedError");
  }
  /** The class's name, `"SpoolLockedError"` (what `error.name` reads). */
  override name = "SpoolLockedError";
  /** The spool directory, resolved. */
  readonly dir: string;
  /** The lock file; delete it only if no shipper uses the directory any more. */
  readonly lockFile: string;
  /** Who holds the lock; undefined when its lock file could not be read. */
  readonly holder: SpoolLockedError.SpoolLockHolder | undefined;
  constructor(dir: string, lockFile: string, holder: SpoolLockedError.SpoolLockHolder | undefined) {
    super(
      `The spool directory ${dir} is in use by another shipper (${describe(holder, lockFile)}). ` +
        "Close that shipper first or give this one its own spoolDir; " +
        `if no shipper uses the directory any more, delete ${lockFile}.`,
    );
    this.dir = dir;
    this.lockFile = lockFile;
    this.holder = holder;
  }
}

/** The types of {@link SpoolLockedError}'s fields. */
export declare namespace SpoolLockedError {
  export type { SpoolLockHolder };
}

function describe(holder: SpoolLockHolder | undefined, lockFile: string): string {
  if (!holder) return `its lock file ${lockFile} cannot be read`;
  if (holder.host !== hostname()) {
    return `process ${holder.pid} on host ${holder.host}, which cannot be checked from this host`;
  }
  if (holder.pid === process.pid) return `another shipper in this process, pid ${holder.pid}`;
  return `process ${holder.pid}, which is still running`;
}
