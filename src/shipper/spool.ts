// The shipper's on-disk spool: one JSON file per group, written atomically
// before `add` resolves, removed once the service confirmed the group.
import { randomUUID } from "node:crypto";
import { readdir, readFile, rm } from "node:fs/promises";
import path from "node:path";
import { atomicWriteFile } from "../util/atomic-write.js";
import type { TrajectoryGroupWire } from "../wire/index.js";

/** One group waiting to be shipped (or, with `logged`, to be trained on). */
export interface SpoolEntry {
  id: string;
  split: string;
  group: TrajectoryGroupWire;
  /** Logged already; waits only for its training job. */
  logged: boolean;
}

const SUFFIX = ".group.json";

export class Spool {
  readonly dir: string;
  #seq = 0;
  constructor(dir: string) {
    this.dir = path.resolve(dir);
  }

  /** A fresh id that sorts after every earlier one of this process. */
  newId(): string {
    this.#seq += 1;
    return `${Date.now().toString().padStart(14, "0")}-${String(this.#seq).padStart(8, "0")}-${randomUUID().slice(0, 8)}`;
  }

  async write(entry: SpoolEntry): Promise<void> {
    await atomicWriteFile(this.#file(entry.id), JSON.stringify(entry));
  }

  async remove(id: string): Promise<void> {
    await rm(this.#file(id), { force: true });
  }

  /** Every entry left by an earlier run, oldest first. Unreadable files are reported, not deleted. */
  async readAll(onBad: (file: string, error: unknown) => void): Promise<SpoolEntry[]> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw error;
    }
    const out: SpoolEntry[] = [];
    for (const name of names.filter((n) => n.endsWith(SUFFIX)).sort()) {
      const file = path.join(this.dir, name);
      try {
        out.push(JSON.parse(await readFile(file, "utf8")) as SpoolEntry);
      } catch (error) {
        onBad(file, error);
      }
    }
    return out;
  }

  #file(id: string): string {
    return path.join(this.dir, `${id}${SUFFIX}`);
  }
}
