// The models and jobs this CLI has seen, per service URL. The service lists
// neither (it has no "list models" or "list jobs" endpoint), so, as git does
// with its objects, the CLI keeps the ids it created or was shown, and takes a
// model as its id, its ENTITY/PROJECT/NAME, or a unique prefix of its id, and
// a job as its id or a unique prefix.
//
// The file is shared by every CLI process of the user: a save takes a lock,
// reads the file again and applies this process's changes to what it holds
// now, so processes at once lose nothing. A file the CLI cannot read (not
// JSON, not its shape, not a regular file) is never overwritten: each command
// says so on stderr, naming the file, and does what it was asked without it.
import { z } from "zod";
import { atomicWriteFile } from "../util/atomic-write.js";
import { errorMessage } from "../util/error-message.js";
import type { Model } from "../wire/index.js";
import { NotFoundCliError, UsageError } from "./context.js";
import { knownFilePath, readKnownFile, withKnownLock } from "./known-file.js";

export { knownFilePath } from "./known-file.js";

const knownModel = z.object({
  id: z.string(),
  entity: z.string(),
  project: z.string(),
  name: z.string(),
  base_model: z.string(),
  run_id: z.string().nullish(),
});
const knownJob = z.object({
  id: z.string(),
  model_id: z.string(),
  kind: z.enum(["RL", "SFT"]),
  created_at: z.string(),
});
const serviceRecord = z.looseObject({
  models: z.record(z.string(), knownModel),
  jobs: z.record(z.string(), knownJob),
  /** Models this CLI deleted or found gone, by id: a name then says so, not "unknown". */
  gone: z.record(z.string(), knownModel).optional(),
});
/** The shape of known.json. */
export const knownFileSchema = z.looseObject({
  version: z.literal(1),
  services: z.record(z.string(), serviceRecord),
});
export type KnownModel = z.infer<typeof knownModel>;
export type KnownJob = z.infer<typeof knownJob>;
type ServiceRecord = z.infer<typeof serviceRecord>;
type KnownFile = z.infer<typeof knownFileSchema>;

/** One change this process made, applied again to the file as it is when saved. */
type Change =
  | { kind: "model"; model: KnownModel }
  | { kind: "forget"; model: KnownModel }
  | { kind: "job"; job: KnownJob };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Git takes 4 characters at least; so do we. */
const MIN_PREFIX = 4;

/** The known models and jobs of one service URL; changes are saved with `save()`. */
export class Known {
  readonly #file: string;
  readonly #url: string;
  readonly #all: KnownFile;
  readonly #warn: (message: string) => void;
  /** Why the file cannot be used, said once; nothing is saved over it. */
  #unusable: string | undefined;
  #changes: Change[] = [];

  private constructor(
    file: string,
    url: string,
    all: KnownFile,
    warn: (message: string) => void,
    unusable: string | undefined,
  ) {
    this.#file = file;
    this.#url = url;
    this.#all = all;
    this.#warn = warn;
    this.#unusable = unusable;
  }

  /**
   * Reads the file. A missing file is empty; one that cannot be read is empty
   * too, and `warn` is told why, naming the file: it only saves typing, so it
   * never stops a command.
   */
  static async load(url: string, warn: (message: string) => void = () => {}): Promise<Known> {
    const file = knownFilePath();
    const read = await readKnownFile(file, knownFileSchema);
    const empty: KnownFile = { version: 1, services: {} };
    if (read.problem) warn(unusableMessage(file, read.problem));
    return new Known(file, url, read.value ?? empty, warn, read.problem);
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
    const model: KnownModel = {
      id: m.id,
      entity: m.entity,
      project: m.project ?? "",
      name: m.name ?? "",
      base_model: m.base_model ?? "",
      run_id: m.run_id ?? null,
    };
    this.#here.models[m.id] = model;
    if (this.#here.gone) delete this.#here.gone[m.id];
    this.#changes.push({ kind: "model", model });
  }

  /** Forgets a model that was deleted or no longer exists; its name is then said to be gone. */
  forgetModel(id: string): void {
    if (!Object.hasOwn(this.#here.models, id)) return;
    const model = this.#here.models[id] as KnownModel;
    delete this.#here.models[id];
    this.#here.gone ??= {};
    this.#here.gone[id] = model;
    this.#changes.push({ kind: "forget", model });
  }

  rememberJob(job: KnownJob): void {
    this.#here.jobs[job.id] = job;
    this.#changes.push({ kind: "job", job });
  }

  /**
   * Saves this process's changes: under the file's lock, applied to the file
   * as it is now (other CLI processes may have saved since it was read). A
   * file that cannot be used is left as it is; the problem goes to `warn`,
   * never thrown: the command's own work is done.
   */
  async save(): Promise<void> {
    const changes = this.#changes;
    if (changes.length === 0) return;
    this.#changes = [];
    // Said when the file was read; it is left as it is.
    if (this.#unusable) return;
    try {
      await withKnownLock(this.#file, async () => {
        const read = await readKnownFile(this.#file, knownFileSchema);
        if (read.problem) {
          this.#unusable = read.problem;
          this.#warn(unusableMessage(this.#file, read.problem));
          return;
        }
        const all = read.value ?? { version: 1, services: {} };
        const services = all.services;
        if (!Object.hasOwn(services, this.#url)) services[this.#url] = { models: {}, jobs: {} };
        const here = services[this.#url] as ServiceRecord;
        for (const change of changes) {
          if (change.kind === "model") {
            here.models[change.model.id] = change.model;
            if (here.gone) delete here.gone[change.model.id];
          } else if (change.kind === "job") here.jobs[change.job.id] = change.job;
          else {
            delete here.models[change.model.id];
            here.gone ??= {};
            here.gone[change.model.id] = change.model;
          }
        }
        await atomicWriteFile(this.#file, `${JSON.stringify(all, null, 2)}\n`);
      });
    } catch (error) {
      this.#warn(
        `could not save what this command learned to ${this.#file}: ${errorMessage(error)}. The command itself succeeded; later commands may need the model's or job's full id.`,
      );
    }
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
      const gone = Object.values(this.#here.gone ?? {}).find(
        (m) => m.entity === named.entity && m.project === named.project && m.name === named.name,
      );
      if (gone)
        throw new NotFoundCliError(
          `model ${named.entity}/${named.project}/${named.name} (${gone.id}) was deleted from ${this.#url}; 'models create --project ${named.project} --name ${named.name} --base-model ${gone.base_model || "BASE"}' makes a new one.`,
        );
      throw new NotFoundCliError(
        `no model named ${named.entity}/${named.project}/${named.name} is known for ${this.#url}.${baseUrlHint(this.#url)} The service does not list models, so the CLI knows those it created or found: run 'models create --entity ${named.entity} --project ${named.project} --name ${named.name} --base-model BASE --return-existing' once, or give the model's id.`,
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
    // Ids are hexadecimal: anything else may be a key pasted in the wrong
    // place, and is never printed.
    if (!/^[0-9a-f-]+$/i.test(ref))
      throw new UsageError(
        `the ${what} argument is not a ${what} id, a prefix of one${what === "model" ? " or ENTITY/PROJECT/NAME" : ""} (ids are hexadecimal; the value is not shown, in case it is a key).`,
      );
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
        `no ${what} id known for ${this.#url} starts with ${JSON.stringify(ref)}; give the whole id${what === "model" ? " or ENTITY/PROJECT/NAME" : ""}.${baseUrlHint(this.#url)}`,
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

/** The hint the client gives on a 404 from a base URL without /v1, for lookups that never reach the service. */
function baseUrlHint(url: string): string {
  let pathname: string;
  try {
    pathname = new URL(url).pathname.replace(/\/+$/, "");
  } catch {
    return "";
  }
  if (pathname.endsWith("/v1")) return "";
  return ` The base URL ${url} does not end in /v1, where the service's routes are; try ${url.replace(/\/+$/, "")}/v1.`;
}

function unusableMessage(file: string, problem: string): string {
  return `the CLI's state file ${file} cannot be used: ${problem}. Models and jobs are not remembered (give full ids) until it is fixed or removed; it only saves typing, nothing else depends on it.`;
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
