// The emulator's state: models, checkpoints (with their parameters), jobs,
// events and logged trajectories. In memory, optionally mirrored to one JSON
// file in a data directory, written atomically after every change.
import { randomUUID } from "node:crypto";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { atomicWriteFile } from "../util/atomic-write.js";
import { errorMessage } from "../util/error-message.js";
import { initialParams, type Params } from "./model.js";

export interface StoredModel {
  id: string;
  entity: string;
  project: string;
  name: string;
  base_model: string;
  run_id: string;
  created: number;
}
export interface StoredCheckpoint {
  id: string;
  model_id: string;
  step: number;
  metrics: Record<string, number>;
  params: Params;
}
/** Job status values: `QUEUED`, `RUNNING`, `COMPLETED`, `FAILED`. */
export type JobStatus = "QUEUED" | "RUNNING" | "COMPLETED" | "FAILED";
export interface StoredJob {
  id: string;
  kind: "rl" | "sft";
  model_id: string;
  /** The model's entity, kept so the job stays private to it after the model is deleted. */
  entity?: string;
  status: JobStatus;
  created_at: string;
  training_start: string | null;
  training_end: string | null;
  error_message: string | null;
  checkpoint_step: number | null;
  /** RL: the model's latest step when the job was created (its rollouts were sampled there). */
  base_step?: number;
  request: unknown;
}
export interface StoredEvent {
  id: string;
  job_id: string;
  type: "training_started" | "gradient_step" | "training_ended" | "training_failed";
  data: Record<string, unknown>;
  created_at: string;
}
export interface StoredLog {
  id: string;
  model_id: string;
  split: string;
  /** The model's latest step when the groups were logged. */
  step?: number;
  trajectory_groups: unknown[];
  metrics: Record<string, number>;
}

/** Where a deleted checkpoint stood, so a page cursor naming it still works. */
export interface Tombstone {
  id: string;
  model_id: string;
  step: number;
}

interface Snapshot {
  models: StoredModel[];
  checkpoints: StoredCheckpoint[];
  jobs: StoredJob[];
  events: StoredEvent[];
  logs: StoredLog[];
  tombstones?: Tombstone[];
}

export class Store {
  models = new Map<string, StoredModel>();
  checkpoints: StoredCheckpoint[] = [];
  jobs = new Map<string, StoredJob>();
  events: StoredEvent[] = [];
  logs: StoredLog[] = [];
  tombstones = new Map<string, Tombstone>();
  private writing: Promise<void> = Promise.resolve();
  private dirty = false;

  private constructor(
    private readonly file: string | undefined,
    private readonly warn: (message: string) => void,
  ) {}

  /** `warn` hears of a state write that failed (the emulator keeps serving from memory). */
  static async open(
    dataDir: string | undefined,
    warn: (message: string) => void = console.warn,
  ): Promise<Store> {
    const store = new Store(dataDir ? path.join(dataDir, "emulator-state.json") : undefined, warn);
    if (store.file) {
      let text: string | undefined;
      try {
        text = await readFile(store.file, "utf8");
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      }
      if (text !== undefined) {
        const snap = JSON.parse(text) as Snapshot;
        for (const m of snap.models) store.models.set(m.id, m);
        store.checkpoints = snap.checkpoints;
        for (const j of snap.jobs) store.jobs.set(j.id, j);
        store.events = snap.events;
        store.logs = snap.logs;
        for (const t of snap.tombstones ?? []) store.tombstones.set(t.id, t);
        // A job that was running when the process stopped cannot resume.
        for (const job of store.jobs.values()) {
          if (job.status === "QUEUED" || job.status === "RUNNING") {
            store.fail(job, "The emulator stopped before this job finished.");
          }
        }
      }
    }
    return store;
  }

  /** Schedules a write of the whole state; writes are serialized and coalesced. */
  save(): void {
    if (!this.file) return;
    if (this.dirty) return;
    this.dirty = true;
    const file = this.file;
    this.writing = this.writing.then(async () => {
      this.dirty = false;
      const snap: Snapshot = {
        models: [...this.models.values()],
        checkpoints: this.checkpoints,
        jobs: [...this.jobs.values()],
        events: this.events,
        logs: this.logs,
        tombstones: [...this.tombstones.values()],
      };
      // A write that fails must not reject this chain: nobody awaits it but
      // flush(), and an unhandled rejection would end the host process.
      try {
        await atomicWriteFile(file, JSON.stringify(snap));
      } catch (error) {
        this.warn(
          `The emulator could not write its state to ${file}: ${errorMessage(error)}. It keeps serving from memory and tries again on the next change.`,
        );
      }
    });
  }

  /** Resolves when every scheduled write is on disk. */
  async flush(): Promise<void> {
    await this.writing;
  }

  createModel(fields: Omit<StoredModel, "id" | "run_id" | "created">): StoredModel {
    const model: StoredModel = {
      ...fields,
      id: randomUUID(),
      run_id: randomUUID().slice(0, 8),
      created: Date.now(),
    };
    this.models.set(model.id, model);
    this.addCheckpoint(model.id, 0, {}, initialParams());
    return model;
  }

  findModel(entity: string | undefined, project: string, name: string): StoredModel | undefined {
    for (const m of this.models.values()) {
      if (m.project === project && m.name === name && (entity === undefined || m.entity === entity))
        return m;
    }
    return undefined;
  }

  modelCheckpoints(modelId: string): StoredCheckpoint[] {
    return this.checkpoints.filter((c) => c.model_id === modelId).sort((a, b) => a.step - b.step);
  }

  latestCheckpoint(modelId: string): StoredCheckpoint | undefined {
    return this.modelCheckpoints(modelId).at(-1);
  }

  addCheckpoint(
    modelId: string,
    step: number,
    metrics: Record<string, number>,
    params: Params,
  ): StoredCheckpoint {
    const cp = { id: randomUUID(), model_id: modelId, step, metrics, params };
    this.checkpoints.push(cp);
    this.save();
    return cp;
  }

  /** Deletes these steps of a model; returns how many existed. */
  deleteCheckpoints(modelId: string, steps: Set<number>): number {
    const before = this.checkpoints.length;
    this.checkpoints = this.checkpoints.filter((c) => {
      if (c.model_id !== modelId || !steps.has(c.step)) return true;
      this.tombstones.set(c.id, { id: c.id, model_id: c.model_id, step: c.step });
      return false;
    });
    this.save();
    return before - this.checkpoints.length;
  }

  /**
   * Deletes a model, its checkpoints and logs. Its jobs stay readable; one
   * still queued or running ends as failed, so whoever follows it sees why.
   */
  deleteModel(modelId: string): number {
    const before = this.checkpoints.length;
    this.checkpoints = this.checkpoints.filter((c) => c.model_id !== modelId);
    for (const [id, t] of this.tombstones) if (t.model_id === modelId) this.tombstones.delete(id);
    for (const job of this.jobs.values()) {
      if (job.model_id === modelId && (job.status === "QUEUED" || job.status === "RUNNING"))
        this.fail(
          job,
          `Model ${modelId} was deleted while this job ran; no checkpoint was written.`,
        );
    }
    this.logs = this.logs.filter((l) => l.model_id !== modelId);
    this.models.delete(modelId);
    this.save();
    return before - this.checkpoints.length;
  }

  createJob(kind: "rl" | "sft", model: StoredModel, request: unknown): StoredJob {
    const job: StoredJob = {
      id: randomUUID(),
      kind,
      model_id: model.id,
      entity: model.entity,
      status: "QUEUED",
      created_at: new Date().toISOString(),
      training_start: null,
      training_end: null,
      error_message: null,
      checkpoint_step: null,
      request,
    };
    this.jobs.set(job.id, job);
    this.save();
    return job;
  }

  emit(job: StoredJob, type: StoredEvent["type"], data: Record<string, unknown>): void {
    this.events.push({
      id: randomUUID(),
      job_id: job.id,
      type,
      data,
      created_at: new Date().toISOString(),
    });
    this.save();
  }

  fail(job: StoredJob, message: string): void {
    job.status = "FAILED";
    job.error_message = message;
    job.training_end = new Date().toISOString();
    this.emit(job, "training_failed", { error_message: message });
  }
}
