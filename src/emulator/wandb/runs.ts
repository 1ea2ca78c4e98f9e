// W&B's run surface, as `wandb.init(id=..., resume="allow")` and `finish()`
// use it: UpsertBucket, RunResumeStatus, Viewer, ServerFeaturesQuery,
// CreateRunFiles, MarkRunFilesUploaded, a run query, and the run's
// file_stream (summary, line counts, end).
import { randomUUID } from "node:crypto";
import type { ServerResponse } from "node:http";
import { type Caller, entityFor, GraphqlError, type Vars } from "./graphql.js";
import { entityId, isRecord, parseJsonString, projectId, safeJson, send } from "./http.js";
import type { UploadUrls } from "./uploads.js";

interface StoredRun {
  id: string;
  entity: string;
  project: string;
  name: string;
  displayName: string | null;
  host: string | null;
  config: unknown;
  state: "running" | "finished" | "crashed";
  notes: string | null;
  tags: string[];
  /** The run's summary (`wandb-summary.json`), as the last file_stream sent it. */
  summary: Record<string, unknown>;
  /** Lines the file_stream wrote to each of the run's line files, and the last history line. */
  lines: { history: number; events: number; output: number };
  historyTail: string[];
  eventsTail: string[];
  /** Run files (`CreateRunFiles`): name → uploaded bytes (undefined until the PUT). */
  files: Map<string, Buffer | undefined>;
}

/** The runs W&B's client creates and resumes, in memory. */
export class WandbRuns {
  readonly #runs = new Map<string, StoredRun>();

  constructor(private readonly uploads: UploadUrls) {}

  /** The run `entity/project/name`, for an upload of one of its files. */
  get(key: string): { files: Map<string, Buffer | undefined> } | undefined {
    return this.#runs.get(key);
  }

  upsert(v: Vars, caller: Caller) {
    const entity = entityFor(caller, v.entity);
    for (const key of ["name", "project", "displayName", "host", "config", "state"])
      if (v[key] != null && typeof v[key] !== "string")
        throw new GraphqlError(`upsertBucket: ${key} must be a string.`);
    const project = typeof v.project === "string" && v.project ? v.project : "uncategorized";
    const name = typeof v.name === "string" && v.name ? v.name : randomUUID().slice(0, 8);
    const key = `${entity}/${project}/${name}`;
    const known = this.#runs.get(key);
    if (v.tags != null && !(Array.isArray(v.tags) && v.tags.every((t) => typeof t === "string")))
      throw new GraphqlError("upsertBucket: tags must be a list of strings.");
    if (v.notes != null && typeof v.notes !== "string")
      throw new GraphqlError("upsertBucket: notes must be a string.");
    const run: StoredRun = known ?? newRun(key, entity, project, name);
    if (v.displayName) run.displayName = v.displayName;
    if (v.host) run.host = v.host;
    if (v.notes != null) run.notes = v.notes;
    if (v.tags != null) run.tags = [...v.tags];
    // The client sends the whole config each time: W&B keeps the latest.
    if (v.config) run.config = parseJsonString(v.config, "upsertBucket: config");
    if (v.summaryMetrics != null) {
      if (typeof v.summaryMetrics !== "string")
        throw new GraphqlError("upsertBucket: summaryMetrics must be a JSON string.");
      const summary = parseJsonString(v.summaryMetrics, "upsertBucket: summaryMetrics");
      if (isRecord(summary)) Object.assign(run.summary, summary);
    }
    // Resuming a finished run (resume="allow") makes it run again until its next end.
    run.state = v.state === "finished" || v.state === "crashed" ? v.state : "running";
    this.#runs.set(key, run);
    return {
      upsertBucket: {
        bucket: {
          id: run.id,
          name: run.name,
          displayName: run.displayName ?? run.name,
          description: null,
          config: run.config === null ? null : JSON.stringify(run.config),
          sweepName: null,
          project: {
            id: projectId(entity, project),
            name: project,
            entity: { id: entityId(entity), name: entity },
          },
          historyLineCount: run.lines.history,
        },
        inserted: !known,
      },
    };
  }

  /** `POST /files/<entity>/<project>/<run>/file_stream`: the run's summary, line counts and end. */
  fileStream(scope: string[], body: unknown, caller: Caller, res: ServerResponse) {
    const [entity, project, name] = scope.map(decodePart) as [string, string, string];
    try {
      entityFor(caller, entity);
    } catch (error) {
      return send(res, 403, { error: (error as Error).message });
    }
    const run = this.#runs.get(`${entity}/${project}/${name}`);
    if (!run) return send(res, 404, { error: `No run ${entity}/${project}/${name}.` });
    if (!isRecord(body)) return send(res, 400, { error: "The body must be a JSON object." });
    if (body.files != null && !isRecord(body.files))
      return send(res, 400, { error: "files must be a JSON object of file name to chunk." });
    for (const [file, chunk] of Object.entries(body.files ?? {})) {
      if (!isRecord(chunk) || !Array.isArray(chunk.content) || typeof chunk.offset !== "number")
        return send(res, 400, { error: `files[${file}] must be { offset, content: [lines] }.` });
      const lines = chunk.content.filter((l): l is string => typeof l === "string");
      const end = chunk.offset + lines.length;
      if (file === "wandb-summary.json") {
        const last = lines.at(-1);
        const summary = last === undefined ? undefined : safeJson(last);
        if (isRecord(summary)) run.summary = summary;
      } else if (file === "wandb-history.jsonl") {
        run.lines.history = Math.max(run.lines.history, end);
        if (lines.length > 0) run.historyTail = lines.slice(-10);
      } else if (file === "wandb-events.jsonl") {
        run.lines.events = Math.max(run.lines.events, end);
        if (lines.length > 0) run.eventsTail = lines.slice(-10);
      } else if (file === "output.log") {
        run.lines.output = Math.max(run.lines.output, end);
      }
    }
    if (body.complete === true) {
      const code = body.exitcode;
      run.state = code === 0 || code === undefined ? "finished" : "crashed";
    }
    send(res, 200, { exitcode: null, limits: {} });
  }

  /** `project { run(...) }`: a run as the public API reads it. */
  query(v: Vars, caller: Caller) {
    const entity = entityFor(caller, v.entity ?? v.entityName);
    const project = v.project ?? v.projectName;
    const run = this.#runs.get(`${entity}/${String(project)}/${String(v.name ?? v.runName)}`);
    return {
      project: run
        ? {
            run: {
              id: run.id,
              name: run.name,
              displayName: run.displayName,
              host: run.host,
              state: run.state,
              config: run.config === null ? null : JSON.stringify(run.config),
              summaryMetrics: JSON.stringify(run.summary),
            },
          }
        : null,
    };
  }

  /**
   * `RunResumeStatus`: the project (W&B's "model") and, when the run exists,
   * what the client resumes from: its config, summary, line counts of its
   * files and their last lines, tags, notes, and `wandbConfig(keys: ["t"])`
   * (the client takes a run as existing only when that holds "t").
   */
  resumeStatus(v: Vars, caller: Caller) {
    const entity = entityFor(caller, v.entity);
    const project = typeof v.project === "string" && v.project ? v.project : "uncategorized";
    if (typeof v.name !== "string" || v.name === "")
      throw new GraphqlError("RunResumeStatus: name must be a non-empty string.");
    const known = [...this.#runs.values()].some(
      (r) => r.entity === entity && r.project === project,
    );
    if (!known) return { model: null };
    const run = this.#runs.get(`${entity}/${project}/${v.name}`);
    const config = isRecord(run?.config) ? run.config : {};
    const wandb =
      isRecord(config._wandb) && isRecord(config._wandb.value) ? config._wandb.value : {};
    return {
      model: {
        id: projectId(entity, project),
        name: project,
        entity: { id: entityId(entity), name: entity },
        bucket: run
          ? {
              id: run.id,
              name: run.name,
              summaryMetrics: JSON.stringify(run.summary),
              displayName: run.displayName ?? run.name,
              logLineCount: run.lines.output,
              historyLineCount: run.lines.history,
              eventsLineCount: run.lines.events,
              historyTail: JSON.stringify(run.historyTail),
              eventsTail: JSON.stringify(run.eventsTail),
              config: JSON.stringify(config),
              tags: run.tags,
              notes: run.notes,
              wandbConfig: JSON.stringify({ t: wandb.t ?? {} }),
            }
          : null,
      },
    };
  }

  /** `CreateRunFiles`: signed upload URLs for files of a run (its config, summary, requirements…). */
  createFiles(v: Vars, caller: Caller, origin: string) {
    const entity = entityFor(caller, v.entity);
    const key = `${entity}/${String(v.project)}/${String(v.run)}`;
    const run = this.#runs.get(key);
    if (!run) throw new GraphqlError(`createRunFiles: no run ${key}.`);
    if (!Array.isArray(v.files) || !v.files.every((f: unknown) => typeof f === "string" && f))
      throw new GraphqlError("createRunFiles: files must be a list of file names.");
    const files = (v.files as string[]).map((name) => {
      if (!run.files.has(name)) run.files.set(name, undefined);
      return {
        name,
        uploadUrl: this.uploads.url(origin, { artifactId: "", file: name, run: key }, ""),
      };
    });
    return { createRunFiles: { runID: run.id, uploadHeaders: [], files } };
  }

  markFilesUploaded(v: Vars, caller: Caller) {
    const entity = entityFor(caller, v.entity);
    const key = `${entity}/${String(v.project)}/${String(v.run)}`;
    if (!this.#runs.has(key)) throw new GraphqlError(`markRunFilesUploaded: no run ${key}.`);
    return { markRunFilesUploaded: { success: true } };
  }
}

/** `Viewer`: the user the API key belongs to (its entity is its username). */
export function viewer(caller: Caller) {
  const name = caller.entity;
  return {
    viewer: {
      id: Buffer.from(`User:${name}`).toString("base64"),
      entity: name,
      username: name,
      email: `${name}@emulator.local`,
      flags: "{}",
      admin: false,
      teams: { edges: [] },
    },
  };
}

/**
 * `ServerInfo` features: none is enabled, so the client takes the paths every
 * W&B server serves (the forms this emulator answers).
 */
export function serverInfo() {
  return { serverInfo: { features: [] } };
}

function newRun(key: string, entity: string, project: string, name: string): StoredRun {
  return {
    id: Buffer.from(`Run:${key}`).toString("base64"),
    entity,
    project,
    name,
    displayName: null,
    host: null,
    config: null,
    state: "running",
    notes: null,
    tags: [],
    summary: {},
    lines: { history: 0, events: 0, output: 0 },
    historyTail: [],
    eventsTail: [],
    files: new Map(),
  };
}

// A malformed %-escape reads as itself: it then names no run.
function decodePart(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}
