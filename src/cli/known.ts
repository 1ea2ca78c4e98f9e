// The models and jobs this CLI has seen, per service URL. The service lists
// neither (it has no "list models" or "list jobs" endpoint), so, as git does
// with its objects, the CLI keeps the ids it created or was shown, and takes a
// model as its id, its ENTITY/PROJECT/NAME, or a unique prefix of its id, and
// a job as its id or a unique prefix.
import { readFile } from "node:fs/promises";
import { homedir } from "node:os";
import path from "node:path";
import { atomicWriteFile } from "../util/atomic-write.js";
import type { Model } from "../wire/index.js";
import { NotFoundCliError, UsageError } from "./context.js";

export interface KnownModel {
  id: string;
  entity: string;
  project: string;
  name: string;
  base_model: string;
  run_id?: string | null;
}

export interface KnownJob {
  id: string;
  model_id: string;
  kind: "RL" | "SFT";
  created_at: string;
}

interface ServiceRecord {
  models: Record<string, KnownModel>;
  jobs: Record<string, KnownJob>;
}

interface KnownFile {
  version: 1;
  services: Record<string, ServiceRecord>;
}

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

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Git takes 4 characters at least; so do we. */
const MIN_PREFIX = 4;

/** The known models and jobs of one service URL; changes are saved with `save()`. */
export class Known {
  readonly #file: string;
  readonly #url: string;
  readonly #all: KnownFile;
  #changed = false;

  private constructor(file: string, url: string, all: KnownFile) {
    this.#file = file;
    this.#url = url;
    this.#all = all;
  }

  /** Reads the file (a missing or unreadable one is empty: it only saves typing). */
  static async load(url: string): Promise<Known> {
    const file = knownFilePath();
    let all: KnownFile = { version: 1, services: {} };
    try {
      const parsed = JSON.parse(await readFile(file, "utf8")) as KnownFile;
      if (parsed && parsed.version === 1 && typeof parsed.services === "object") all = parsed;
    } catch {}
    return new Known(file, url, all);
  }

  get url(): string {
    return this.#url;
  }

  get #here(): ServiceRecord {
    const services = this.#all.services;
    if (!Object.hasOwn(services, this.#url)) services[this.#url] = { models: {}, jobs: {} };
    return services[this.#url] as ServiceRecord;
  }

  models(): KnownModel[] {
    return Object.values(this.#here.models);
  }

  jobs(): KnownJob[] {
    return Object.values(this.#here.jobs);
  }

  rememberModel(m: Model | KnownModel): void {
    this.#here.models[m.id] = {
      id: m.id,
      entity: m.entity,
      project: m.project ?? "",
      name: m.name ?? "",
      base_model: m.base_model ?? "",
      run_id: m.run_id ?? null,
    };
    this.#changed = true;
  }

  forgetModel(id: string): void {
    if (!Object.hasOwn(this.#here.models, id)) return;
    delete this.#here.models[id];
    this.#changed = true;
  }

  rememberJob(job: KnownJob): void {
    this.#here.jobs[job.id] = job;
    this.#changed = true;
  }

  async save(): Promise<void> {
    if (!this.#changed) return;
    await atomicWriteFile(this.#file, `${JSON.stringify(this.#all, null, 2)}\n`);
    this.#changed = false;
  }

  /**
   * The model `ref` names: a full id (known or not), ENTITY/PROJECT/NAME (or
   * its wandb-artifact:/// name), or a unique prefix of a known id.
   */
  model(ref: string): KnownModel | { id: string } {
    const named = parseModelName(ref);
    if (named) {
      const found = this.models().find(
        (m) => m.entity === named.entity && m.project === named.project && m.name === named.name,
      );
      if (found) return found;
      throw new NotFoundCliError(
        `no model named ${named.entity}/${named.project}/${named.name} is known for ${this.#url}. The service does not list models, so the CLI knows those it created or found: run 'models create --entity ${named.entity} --project ${named.project} --name ${named.name} --base-model BASE --return-existing' once, or give the model's id.`,
      );
    }
    return this.#byId(ref, this.#here.models, "model");
  }

  /** The job `ref` names: a full id, or a unique prefix of one this CLI started. */
  job(ref: string): KnownJob | { id: string } {
    return this.#byId(ref, this.#here.jobs, "job");
  }

  #byId<T extends { id: string }>(
    ref: string,
    all: Record<string, T>,
    what: string,
  ): T | { id: string } {
    if (Object.hasOwn(all, ref)) return all[ref] as T;
    if (UUID.test(ref)) return all[ref.toLowerCase()] ?? { id: ref };
    if (ref.length < MIN_PREFIX) {
      throw new UsageError(
        `${JSON.stringify(ref)} is too short for a ${what} id prefix; give at least ${MIN_PREFIX} characters.`,
      );
    }
    const lower = ref.toLowerCase();
    const matches = Object.values(all).filter((x) => x.id.toLowerCase().startsWith(lower));
    if (matches.length === 1) return matches[0] as T;
    if (matches.length === 0) {
      throw new NotFoundCliError(
        `no ${what} id known for ${this.#url} starts with ${JSON.stringify(ref)}; give the whole id${what === "model" ? " or ENTITY/PROJECT/NAME" : ""}.`,
      );
    }
    throw new UsageError(
      `${JSON.stringify(ref)} is ambiguous: ${matches.length} known ${what} ids start with it (${matches
        .slice(0, 5)
        .map((m) => m.id)
        .join(", ")}); give more characters.`,
    );
  }
}

/** ENTITY/PROJECT/NAME, or wandb-artifact:///ENTITY/PROJECT/NAME[:step], split; else undefined. */
export function parseModelName(
  ref: string,
): { entity: string; project: string; name: string } | undefined {
  const bare = ref.startsWith("wandb-artifact:///")
    ? ref.slice("wandb-artifact:///".length).replace(/:[^/]*$/, "")
    : ref;
  const parts = bare.split("/");
  if (parts.length !== 3 || parts.some((p) => p === "")) return undefined;
  const [entity, project, name] = parts as [string, string, string];
  return { entity, project, name };
}

/** Whether a resolved model carries its names (it is known), not only an id. */
export function isKnownModel(m: KnownModel | { id: string }): m is KnownModel {
  return "entity" in m;
}
