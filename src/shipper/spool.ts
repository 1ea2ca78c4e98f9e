// The shipper's on-disk spool: one JSON file per group, written atomically
// before `add` resolves, removed once the service confirmed the group. A
// training job gets one more file holding its id and its groups, written
// atomically as soon as the service named the job, so a restart follows that
// job instead of training the same groups again.
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { readdir, readFile, rm } from "node:fs/promises";
import path from "node:path";
import { PreparedGroup } from "../trajectory/index.js";
import { atomicWriteFile, isTempName } from "../util/atomic-write.js";
import type { TrajectoryGroupWire } from "../wire/index.js";

/** One group waiting to be shipped (or, with `logged`, to be trained on). */
export interface SpoolEntry {
  id: string;
  split: string;
  /**
   * As read from disk, or prepared (its bytes are written as they are);
   * undefined while it waits on disk only (`Spool.load` reads it back).
   */
  group: TrajectoryGroupWire | PreparedGroup | undefined;
  /** Logged already; waits only for its training job. */
  logged: boolean;
}

/** A training job the service created for some logged groups. */
export interface SpoolJob {
  /** The spool's own id of this file. */
  id: string;
  /** The service's id of the job. */
  jobId: string;
  /** The model's latest step before the job; the job's checkpoint comes after it. */
  stepBefore: number;
  entries: SpoolEntry[];
  /** Set once the job failed: its groups are kept and reported, never trained again. */
  error?: string;
}

/** What an earlier run left behind. */
export interface SpoolContents {
  groups: SpoolEntry[];
  jobs: SpoolJob[];
  /**
   * Logged groups whose training job was being created when the run ended
   * or lost the answer: the service may have trained them.
   */
  uncertain: SpoolEntry[];
}

const GROUP = ".group.json";
const JOB = ".job.json";
const CREATING = ".creating.json";

export class Spool {
  readonly dir: string;
  #seq = 0;
  readonly #sizes = new Map<string, number>();
  constructor(dir: string) {
    this.dir = path.resolve(dir);
  }

  /** A fresh id that sorts after every earlier one of this process. */
  newId(): string {
    this.#seq += 1;
    return `${Date.now().toString().padStart(14, "0")}-${String(this.#seq).padStart(8, "0")}-${randomUUID().slice(0, 8)}`;
  }

  /**
   * An entry's group, read back from its file: the prepared bytes as they
   * were written when the file is this process's layout, else the parsed group.
   */
  async load(entry: SpoolEntry): Promise<PreparedGroup | TrajectoryGroupWire> {
    return groupIn(await readFile(this.#file(entry.id, GROUP)), entry);
  }

  /** {@link load}, synchronously (for `failedGroups()`). */
  loadSync(entry: SpoolEntry): PreparedGroup | TrajectoryGroupWire {
    return groupIn(readFileSync(this.#file(entry.id, GROUP)), entry);
  }

  /** The size of a group file read by `readAll`, in bytes. */
  sizeOf(id: string): number {
    return this.#sizes.get(id) ?? 0;
  }

  async write(entry: SpoolEntry): Promise<void> {
    await atomicWriteFile(this.#file(entry.id, GROUP), entryBytes(entry));
  }

  async remove(id: string): Promise<void> {
    await rm(this.#file(id, GROUP), { force: true });
  }

  /**
   * Saves a job with its groups in one atomic write, then drops the groups'
   * own files: from the rename on, the groups belong to the job. A crash
   * before the drops leaves duplicates that `readAll` resolves to the job.
   */
  async writeJob(job: SpoolJob): Promise<void> {
    const { entries, ...rest } = job;
    const head = JSON.stringify({ ...rest, entries: [] }).slice(0, -"[]}".length);
    const parts: Uint8Array[] = [Buffer.from(`${head}[`)];
    entries.forEach((entry, i) => {
      if (i > 0) parts.push(Buffer.from(","));
      parts.push(...entryBytes(entry));
    });
    parts.push(Buffer.from("]}"));
    await atomicWriteFile(this.#file(job.id, JOB), parts);
    for (const entry of job.entries) await this.remove(entry.id);
  }

  /** Marks groups as being in a job whose creation has been requested. */
  async writeCreating(id: string, entries: SpoolEntry[]): Promise<void> {
    const marker = { id, entries: entries.map((e) => e.id) };
    await atomicWriteFile(this.#file(id, CREATING), JSON.stringify(marker));
  }

  async removeCreating(id: string): Promise<void> {
    await rm(this.#file(id, CREATING), { force: true });
  }

  /** The file marking a job creation, for messages. */
  creatingFile(id: string): string {
    return this.#file(id, CREATING);
  }

  async removeJob(id: string): Promise<void> {
    await rm(this.#file(id, JOB), { force: true });
  }

  /** The file a job is kept in, for messages. */
  jobFile(id: string): string {
    return this.#file(id, JOB);
  }

  /**
   * Removes the temporary files of writes that a killed process cut short;
   * returns how many. Only safe while this process holds the directory's
   * lock: a live writer's temporary file would go too.
   */
  async removeLeftoverTemps(): Promise<number> {
    let removed = 0;
    for (const name of await this.#list()) {
      if (!isTempName(name)) continue;
      await rm(path.join(this.dir, name), { force: true });
      removed += 1;
    }
    return removed;
  }

  /**
   * Everything left by an earlier run, oldest first. A group file that a job
   * file also holds is removed (the crash came between the two writes).
   * Unreadable files are reported, not deleted; a file gone between the
   * listing and the reading (someone removed it) is skipped.
   */
  async readAll(onBad: (file: string, error: unknown) => void): Promise<SpoolContents> {
    const names = (await this.#list()).sort();
    const jobs = await this.#readEach<SpoolJob>(names, JOB, jobProblem, onBad);
    const inJobs = new Set(jobs.flatMap((job) => job.entries.map((e) => e.id)));
    const markers = await this.#readEach<{ id: string; entries: string[] }>(
      names,
      CREATING,
      creatingProblem,
      onBad,
    );
    const creating = new Set<string>();
    for (const marker of markers) {
      // The job was named and saved after all: the marker is stale.
      if (marker.entries.every((id) => inJobs.has(id))) await this.removeCreating(marker.id);
      else for (const id of marker.entries) creating.add(id);
    }
    const groups: SpoolEntry[] = [];
    const uncertain: SpoolEntry[] = [];
    for (const entry of await this.#readEach<SpoolEntry>(names, GROUP, entryProblem, onBad)) {
      // A backlog stays on disk: each group is read back when it is needed.
      entry.group = undefined;
      if (inJobs.has(entry.id)) await this.remove(entry.id);
      else if (creating.has(entry.id) && entry.logged) uncertain.push(entry);
      else groups.push(entry);
    }
    return { groups, jobs, uncertain };
  }

  async #readEach<T>(
    names: string[],
    suffix: string,
    problem: (value: unknown) => string | undefined,
    onBad: (file: string, error: unknown) => void,
  ): Promise<T[]> {
    const out: T[] = [];
    for (const name of names.filter((n) => n.endsWith(suffix))) {
      const file = path.join(this.dir, name);
      try {
        const text = await readFile(file, "utf8");
        const value: unknown = JSON.parse(text);
        // Valid JSON of another shape (a hand edit, another program's file)
        // is as unreadable as broken JSON: left in place, never half-used.
        const wrong = problem(value);
        if (wrong !== undefined) throw new Error(`not a spool file: ${wrong}`);
        // The file is removed by its id once handled: a file named otherwise would stay forever.
        const id = (value as { id: string }).id;
        if (`${id}${suffix}` !== name)
          throw new Error(`not a spool file: its id ${id} is not its name`);
        out.push(value as T);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ENOENT") onBad(file, error);
      }
    }
    return out;
  }

  async #list(): Promise<string[]> {
    try {
      return await readdir(this.dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw error;
    }
  }

  #file(id: string, suffix: string): string {
    return path.join(this.dir, `${id}${suffix}`);
  }
}

/** A group file's content: the group's prepared bytes are copied in as they are. */
function entryBytes(entry: SpoolEntry): Uint8Array[] {
  const { group } = entry;
  if (group === undefined) throw new Error(`spool entry ${entry.id} has no group in memory`);
  if (!(group instanceof PreparedGroup)) return [Buffer.from(JSON.stringify(entry))];
  return [headOf(entry), ...group.chunks, Buffer.from("}")];
}

function headOf(entry: SpoolEntry): Buffer {
  const head = JSON.stringify({ id: entry.id, split: entry.split, logged: entry.logged });
  return Buffer.from(`${head.slice(0, -1)},"group":`);
}

function groupIn(file: Buffer, entry: SpoolEntry): PreparedGroup | TrajectoryGroupWire {
  const head = headOf(entry);
  if (file.subarray(0, head.length).equals(head) && file[file.length - 1] === 0x7d) {
    return new PreparedGroup(file.subarray(head.length, file.length - 1));
  }
  return (JSON.parse(file.toString("utf8")) as { group: TrajectoryGroupWire }).group;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** What is wrong with a group file's content, if anything. */
function entryProblem(value: unknown, at = ""): string | undefined {
  if (!isObject(value)) return `${at ? at.slice(0, -1) : "the file"} is not an object`;
  if (typeof value.id !== "string" || value.id === "") return `${at}id: expected a string`;
  if (typeof value.split !== "string") return `${at}split: expected a string`;
  if (!isObject(value.group) || !Array.isArray(value.group.trajectories))
    return `${at}group: expected a trajectory group`;
  if (typeof value.logged !== "boolean") return `${at}logged: expected a boolean`;
  return undefined;
}

/** What is wrong with a job-creation marker's content, if anything. */
function creatingProblem(value: unknown): string | undefined {
  if (!isObject(value)) return "the file is not an object";
  if (typeof value.id !== "string" || value.id === "") return "id: expected a string";
  if (!Array.isArray(value.entries) || !value.entries.every((e) => typeof e === "string"))
    return "entries: expected an array of ids";
  return undefined;
}

/** What is wrong with a job file's content, if anything. */
function jobProblem(value: unknown): string | undefined {
  if (!isObject(value)) return "the file is not an object";
  if (typeof value.id !== "string" || value.id === "") return "id: expected a string";
  if (typeof value.jobId !== "string" || value.jobId === "") return "jobId: expected a string";
  if (typeof value.stepBefore !== "number") return "stepBefore: expected a number";
  if (!Array.isArray(value.entries)) return "entries: expected an array";
  if (value.error !== undefined && typeof value.error !== "string")
    return "error: expected a string";
  for (const [i, entry] of value.entries.entries()) {
    const wrong = entryProblem(entry, `entries[${i}].`);
    if (wrong !== undefined) return wrong;
  }
  return undefined;
}
