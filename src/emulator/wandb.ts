// The subset of W&B's API that saving a dataset artifact takes, served on the
// emulator's own port, in the forms the `wandb` client's core sends. `POST
// /graphql`: UpsertBucket, RunResumeStatus, Viewer, ServerFeaturesQuery,
// CreateRunFiles, MarkRunFilesUploaded, ArtifactType, CreateArtifact (input as
// an object or as flat variables), CreateArtifactManifest, CreateArtifactFiles
// (`$input` or `$artifactFiles`), CommitArtifact, ArtifactByID (W&B's whole
// artifact fragment) and a run query: what the real `wandb` 0.30 client sends
// for ART's `_train_sft`, resuming runs by id. `PUT /wandb-uploads/<token>`
// for the upload URLs it hands out (artifact files, manifests, run files),
// signed and checked like GCS V2 signed URLs (method, Content-MD5,
// Content-Type and expiry are covered; a mismatch is 403). `POST
// /files/<entity>/<project>/<run>/file_stream` for the run's summary, line
// counts and end. The key is checked before a body is read, and bodies are
// capped (413). SFT jobs read `wandb-artifact:///entity/project/name:vN` from
// here. Everything lives in memory, for the life of the process.
import { createHash, createHmac, randomBytes, randomUUID, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { findJsonProblem } from "../util/json-check.js";

interface StoredFile {
  md5: string;
  data?: Buffer;
}
interface StoredArtifact {
  id: string;
  entity: string;
  project: string;
  collection: string;
  type: string;
  versionIndex: number;
  state: "PENDING" | "COMMITTED";
  digest: string;
  metadata: unknown;
  files: Map<string, StoredFile>;
  manifest?: Buffer;
  manifestDigest?: string;
  description: string | null;
  createdAt: string;
  updatedAt: string | null;
}
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
interface Upload {
  artifactId: string;
  /** A file of the artifact, or null for its manifest. */
  file: string | null;
  /** For a run file (`CreateRunFiles`): the run's `entity/project/name`; artifactId is then "". */
  run?: string;
}
/** Who calls: the key's entity, or any entity when the emulator takes any key. */
interface Caller {
  entity: string;
  anyEntity: boolean;
}
type Vars = Record<string, any>;

class GraphqlError extends Error {}

const UPLOAD_PREFIX = "/wandb-uploads/";
const FILE_STREAM = /^\/files\/([^/]+)\/([^/]+)\/([^/]+)\/file_stream$/;

/** Limits of the emulator's W&B API. */
export interface WandbApiOptions {
  /** key → entity, as the emulator's; undefined takes any key as `local`. */
  keys: Map<string, string> | undefined;
  /** Largest uploaded file, in bytes. */
  maxUploadBytes: number;
  /** Largest GraphQL or file_stream body, in bytes. Default 1 MiB. */
  maxRequestBytes?: number;
  /** How long an upload URL stays valid. Default one hour. */
  uploadUrlTtlMs?: number;
}

/** W&B's artifact API in the emulator, and the reader of its artifacts for SFT jobs. */
export class WandbArtifactApi {
  readonly #artifacts = new Map<string, StoredArtifact>();
  readonly #uploads = new Map<string, Upload>();
  readonly #runs = new Map<string, StoredRun>();
  // The key upload URLs are signed with; it never leaves the process.
  readonly #secret = randomBytes(32);
  private readonly keys: Map<string, string> | undefined;
  readonly #options: Required<Omit<WandbApiOptions, "keys">>;

  constructor(options: WandbApiOptions) {
    this.keys = options.keys;
    this.#options = {
      maxUploadBytes: options.maxUploadBytes,
      maxRequestBytes: options.maxRequestBytes ?? 1024 * 1024,
      uploadUrlTtlMs: options.uploadUrlTtlMs ?? 60 * 60 * 1000,
    };
  }

  /** Whether this request is for W&B's API rather than the Training Service's. */
  handles(method: string, pathname: string): boolean {
    return (
      (method === "POST" && pathname === "/graphql") ||
      (method === "PUT" && pathname.startsWith(UPLOAD_PREFIX)) ||
      (method === "POST" && FILE_STREAM.test(pathname))
    );
  }

  async serve(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    if (url.pathname.startsWith(UPLOAD_PREFIX)) return this.#receive(url, req, res);
    // The key first: nothing of an unauthenticated body is read.
    const caller = this.#caller(req);
    if (!caller) {
      return send(
        res,
        401,
        { errors: [{ message: "Missing or unknown API key: send HTTP Basic auth api:<key>." }] },
        true,
      );
    }
    const stream = FILE_STREAM.exec(url.pathname);
    const body = await readCapped(req, this.#options.maxRequestBytes);
    if (body === undefined) return tooLarge(res, this.#options.maxRequestBytes);
    let request: unknown;
    try {
      request = JSON.parse(body.toString("utf8"));
    } catch {
      return send(res, 400, { errors: [{ message: "The request body is not JSON." }] });
    }
    const problem = findJsonProblem(request);
    if (problem)
      return send(res, 400, { errors: [{ message: `The request body: ${problem.message}` }] });
    if (stream) return this.#fileStream(stream.slice(1) as string[], request, caller, res);
    if (!isRecord(request)) {
      return send(res, 400, {
        errors: [{ message: "The request body must be a JSON object { query, variables }." }],
      });
    }
    if (request.variables != null && !isRecord(request.variables)) {
      return send(res, 400, { errors: [{ message: "variables must be a JSON object." }] });
    }
    const origin = `http://${req.headers.host ?? "127.0.0.1"}`;
    try {
      const data = this.#operate(request, (request.variables ?? {}) as Vars, caller, origin);
      return send(res, 200, { data });
    } catch (error) {
      if (!(error instanceof GraphqlError)) throw error;
      return send(res, 200, { errors: [{ message: error.message }], data: null });
    }
  }

  /**
   * The text of the file an SFT job's `wandb-artifact:///` URL names, or an
   * error message saying why there is none.
   */
  read(artifactUrl: string, entity: string | undefined): { text: string } | { error: string } {
    const m = /^wandb-artifact:\/\/\/([^/]+)\/([^/]+)\/([^:/]+)(?::([^/]+))?$/.exec(artifactUrl);
    if (!m)
      return { error: `${artifactUrl} is not wandb-artifact:///entity/project/name:version.` };
    const [, owner, project, collection, alias = "latest"] = m as unknown as string[];
    const artifact = this.#find(owner as string, project as string, collection as string, alias);
    // Another entity's artifact reads exactly as a missing one.
    if (!artifact || (entity !== undefined && artifact.entity !== entity)) {
      return { error: `No committed W&B artifact ${owner}/${project}/${collection}:${alias}.` };
    }
    const files = [...artifact.files.entries()];
    const [, file] = files.find(([name]) => name === "train.jsonl") ?? files[0] ?? [];
    if (!file?.data) return { error: `Artifact ${collection}:${alias} holds no file.` };
    return { text: file.data.toString("utf8") };
  }

  /** The committed version `alias` (`latest` or `vN`) of a collection. */
  #find(
    entity: string,
    project: string,
    collection: string,
    alias: string,
  ): StoredArtifact | undefined {
    const versions = [...this.#artifacts.values()]
      .filter(
        (a) =>
          a.entity === entity &&
          a.project === project &&
          a.collection === collection &&
          a.state === "COMMITTED",
      )
      .sort((a, b) => a.versionIndex - b.versionIndex);
    const version = /^v(\d+)$/.exec(alias);
    return alias === "latest"
      ? versions.at(-1)
      : versions.find((a) => version && a.versionIndex === Number(version[1]));
  }

  #caller(req: IncomingMessage): Caller | undefined {
    const header = req.headers.authorization ?? "";
    const basic = /^Basic\s+(.+)$/i.exec(header);
    const bearer = /^Bearer\s+(.+)$/i.exec(header);
    const key = basic
      ? Buffer.from(basic[1] as string, "base64")
          .toString("utf8")
          .replace(/^[^:]*:/, "")
      : bearer?.[1]?.trim();
    if (!key) return undefined;
    if (!this.keys) return { entity: "local", anyEntity: true };
    const entity = this.keys.get(key);
    return entity ? { entity, anyEntity: false } : undefined;
  }

  #operate(request: Vars, v: Vars, caller: Caller, origin: string) {
    const query = typeof request.query === "string" ? request.query : "";
    const has = (field: string) => new RegExp(`\\b${field}\\s*\\(`).test(query);
    const selects = (field: string) => new RegExp(`\\b${field}\\s*[({]`).test(query);
    if (has("upsertBucket")) return this.#upsertRun(v, caller);
    if (has("model") && has("bucket")) return this.#resumeStatus(v, caller);
    if (selects("viewer")) return this.#viewer(caller);
    if (selects("serverInfo")) return serverInfo();
    if (has("createRunFiles")) return this.#createRunFiles(v, caller, origin);
    if (has("markRunFilesUploaded")) return this.#markRunFiles(v, caller);
    if (has("createArtifact")) return this.#createArtifact(isRecord(v.input) ? v.input : v, caller);
    if (has("createArtifactManifest")) return this.#createManifest(v, caller, origin);
    if (has("createArtifactFiles")) return this.#createFiles(v, caller, origin);
    if (has("commitArtifact")) return this.#commit(v, caller);
    if (has("project") && has("run")) return this.#runQuery(v, caller);
    if (has("project")) return this.#artifactType(v, caller);
    if (has("artifact")) return this.#version(v, caller);
    throw new GraphqlError(
      "The emulator serves only the run and artifact operations of W&B's API that the wandb client needs to log an artifact: UpsertBucket, RunResumeStatus, Viewer, ServerFeaturesQuery, CreateRunFiles, MarkRunFilesUploaded, ArtifactType, CreateArtifact, CreateArtifactManifest, CreateArtifactFiles, CommitArtifact, ArtifactByID, and a run query.",
    );
  }

  #entity(caller: Caller, entity: unknown): string {
    const wanted = typeof entity === "string" && entity !== "" ? entity : caller.entity;
    if (!caller.anyEntity && wanted !== caller.entity) {
      throw new GraphqlError(`This API key belongs to entity ${caller.entity}, not ${wanted}.`);
    }
    return wanted;
  }

  #artifact(id: unknown, caller: Caller): StoredArtifact {
    const artifact = typeof id === "string" ? this.#artifacts.get(id) : undefined;
    if (!artifact || (!caller.anyEntity && artifact.entity !== caller.entity)) {
      throw new GraphqlError(`Artifact ${String(id)} not found.`);
    }
    return artifact;
  }

  #upsertRun(v: Vars, caller: Caller) {
    const entity = this.#entity(caller, v.entity);
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
    const run: StoredRun = known ?? {
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

  #fileStream(scope: string[], body: unknown, caller: Caller, res: ServerResponse) {
    const [entity, project, name] = scope.map(decodePart) as [string, string, string];
    try {
      this.#entity(caller, entity);
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

  #runQuery(v: Vars, caller: Caller) {
    const entity = this.#entity(caller, v.entity ?? v.entityName);
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
  #resumeStatus(v: Vars, caller: Caller) {
    const entity = this.#entity(caller, v.entity);
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

  /** `Viewer`: the user the API key belongs to (its entity is its username). */
  #viewer(caller: Caller) {
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

  /** `CreateRunFiles`: signed upload URLs for files of a run (its config, summary, requirements…). */
  #createRunFiles(v: Vars, caller: Caller, origin: string) {
    const entity = this.#entity(caller, v.entity);
    const key = `${entity}/${String(v.project)}/${String(v.run)}`;
    const run = this.#runs.get(key);
    if (!run) throw new GraphqlError(`createRunFiles: no run ${key}.`);
    if (!Array.isArray(v.files) || !v.files.every((f: unknown) => typeof f === "string" && f))
      throw new GraphqlError("createRunFiles: files must be a list of file names.");
    const files = (v.files as string[]).map((name) => {
      if (!run.files.has(name)) run.files.set(name, undefined);
      return {
        name,
        uploadUrl: this.#uploadUrl(origin, { artifactId: "", file: name, run: key }, ""),
      };
    });
    return { createRunFiles: { runID: run.id, uploadHeaders: [], files } };
  }

  #markRunFiles(v: Vars, caller: Caller) {
    const entity = this.#entity(caller, v.entity);
    const key = `${entity}/${String(v.project)}/${String(v.run)}`;
    if (!this.#runs.has(key)) throw new GraphqlError(`markRunFilesUploaded: no run ${key}.`);
    return { markRunFilesUploaded: { success: true } };
  }

  #artifactType(v: Vars, caller: Caller) {
    const entity = this.#entity(caller, v.entityName);
    if (typeof v.name !== "string" || v.name === "")
      throw new GraphqlError("ArtifactType: name must be a non-empty string.");
    const [collection, alias = "latest"] = v.name.split(":");
    const found = this.#find(entity, String(v.projectName), collection as string, alias);
    return {
      project: {
        artifact: found ? { artifactType: { name: found.type } } : null,
      },
    };
  }

  #createArtifact(input: Vars, caller: Caller) {
    const entity = this.#entity(caller, input.entityName);
    for (const key of ["projectName", "artifactTypeName", "artifactCollectionName", "digest"]) {
      if (typeof input[key] !== "string" || input[key] === "") {
        throw new GraphqlError(`createArtifact: input.${key} must be a non-empty string.`);
      }
    }
    const collection = [...this.#artifacts.values()].filter(
      (a) =>
        a.entity === entity &&
        a.project === input.projectName &&
        a.collection === input.artifactCollectionName,
    );
    const latest = collection.filter((a) => a.state === "COMMITTED").at(-1);
    const same = collection.find((a) => a.state === "COMMITTED" && a.digest === input.digest);
    const artifact: StoredArtifact = same ?? {
      id: randomUUID(),
      entity,
      project: input.projectName,
      collection: input.artifactCollectionName,
      type: input.artifactTypeName,
      // Given at commit, so an abandoned draft leaves no gap in the versions.
      versionIndex: -1,
      state: "PENDING",
      digest: input.digest,
      metadata: parseMetadata(input.metadata),
      files: new Map(),
      description: typeof input.description === "string" ? input.description : null,
      createdAt: new Date().toISOString().replace(/\.\d+Z$/, ""),
      updatedAt: null,
    };
    this.#artifacts.set(artifact.id, artifact);
    return {
      createArtifact: {
        artifact: {
          id: artifact.id,
          state: artifact.state,
          artifactSequence: { latestArtifact: latest ? { id: latest.id } : null },
        },
      },
    };
  }

  #createManifest(v: Vars, caller: Caller, origin: string) {
    const artifact = this.#artifact(v.artifactID, caller);
    if (typeof v.digest !== "string")
      throw new GraphqlError("createArtifactManifest: digest must be a string.");
    const file: Record<string, unknown> = { id: `${artifact.id}-manifest` };
    if (v.includeUpload === true) {
      artifact.manifestDigest = v.digest;
      const md5 = v.digest === "" ? "" : v.digest;
      file.uploadUrl = this.#uploadUrl(origin, { artifactId: artifact.id, file: null }, md5);
      file.uploadHeaders = md5 ? [`Content-MD5:${md5}`] : [];
    }
    return {
      createArtifactManifest: { artifactManifest: { id: `${artifact.id}-manifest`, file } },
    };
  }

  #createFiles(v: Vars, caller: Caller, origin: string) {
    // The client's current form sends `$input: CreateArtifactFilesInput!`; older ones `$artifactFiles`.
    const input = isRecord(v.input) ? v.input : v;
    if (!Array.isArray(input.artifactFiles)) {
      throw new GraphqlError("createArtifactFiles: input.artifactFiles must be a list of files.");
    }
    const specs = input.artifactFiles as unknown[];
    const edges = specs.map((spec, i) => {
      if (!isRecord(spec) || typeof spec.name !== "string" || typeof spec.md5 !== "string") {
        throw new GraphqlError(
          `createArtifactFiles: input.artifactFiles[${i}] must be an object with a name and an md5.`,
        );
      }
      const artifact = this.#artifact(spec.artifactID, caller);
      const known = artifact.files.get(spec.name);
      const stored = known?.md5 === spec.md5 && known.data ? known : { md5: spec.md5 };
      artifact.files.set(spec.name, stored);
      const uploadUrl = stored.data
        ? null
        : this.#uploadUrl(origin, { artifactId: artifact.id, file: spec.name }, spec.md5);
      return {
        node: {
          storagePath: `${artifact.id}/${spec.name}`,
          uploadUrl,
          uploadHeaders: uploadUrl ? [`Content-MD5:${spec.md5}`] : [],
          artifact: { id: artifact.id },
        },
      };
    });
    return { createArtifactFiles: { files: { edges } } };
  }

  #commit(v: Vars, caller: Caller) {
    const artifact = this.#artifact(v.artifactID, caller);
    const missing = [...artifact.files.entries()].filter(([, f]) => !f.data).map(([n]) => n);
    if (missing.length > 0 || !artifact.manifest) {
      const what = missing.length > 0 ? `file ${missing.join(", ")}` : "its manifest";
      throw new GraphqlError(
        `Artifact ${artifact.id} cannot be committed: ${what} was never uploaded.`,
      );
    }
    if (artifact.state !== "COMMITTED") {
      artifact.versionIndex = [...this.#artifacts.values()].filter(
        (a) =>
          a.state === "COMMITTED" &&
          a.entity === artifact.entity &&
          a.project === artifact.project &&
          a.collection === artifact.collection,
      ).length;
      artifact.state = "COMMITTED";
      artifact.updatedAt = new Date().toISOString().replace(/\.\d+Z$/, "");
    }
    return { commitArtifact: { artifact: { id: artifact.id, digest: artifact.digest } } };
  }

  /** `ArtifactByID`: W&B's whole artifact fragment, as the client validates it. */
  #version(v: Vars, caller: Caller) {
    const a = this.#artifact(v.id, caller);
    const committed = a.state === "COMMITTED";
    const project = {
      id: projectId(a.entity, a.project),
      internalId: projectId(a.entity, a.project),
      name: a.project,
      entity: { name: a.entity },
    };
    const sequence = { __typename: "ArtifactSequence", name: a.collection, project };
    const latest = committed && this.#find(a.entity, a.project, a.collection, "latest") === a;
    const aliases = committed
      ? [...(latest ? ["latest"] : []), `v${a.versionIndex}`].map((alias) => ({
          __typename: "ArtifactAlias",
          id: Buffer.from(`ArtifactAlias:${a.id}:${alias}`).toString("base64"),
          alias,
          artifactCollection: sequence,
        }))
      : [];
    let size = 0;
    for (const f of a.files.values()) size += f.data?.length ?? 0;
    return {
      artifact: {
        __typename: "Artifact",
        id: a.id,
        artifactSequence: sequence,
        versionIndex: committed ? a.versionIndex : null,
        artifactType: { name: a.type },
        description: a.description,
        metadata: a.metadata === null ? null : JSON.stringify(a.metadata),
        ttlDurationSeconds: -1,
        ttlIsInherited: true,
        tags: [],
        historyStep: null,
        state: a.state,
        size,
        digest: a.digest,
        digestAlgorithm: "MANIFEST_MD5",
        commitHash: committed ? a.digest.slice(0, 12) : null,
        fileCount: a.files.size,
        createdAt: a.createdAt,
        updatedAt: a.updatedAt,
        aliases,
      },
    };
  }

  // A GCS V2-style signed URL: the signature covers the method, Content-MD5,
  // Content-Type (none) and the expiry, as W&B's storage checks them.
  #uploadUrl(origin: string, upload: Upload, md5: string): string {
    const token = randomUUID();
    this.#uploads.set(token, upload);
    const path = `${UPLOAD_PREFIX}${token}`;
    const expires = Math.floor((Date.now() + this.#options.uploadUrlTtlMs) / 1000);
    const signature = this.#sign(stringToSign("PUT", md5, "", expires, path));
    const query = new URLSearchParams({
      GoogleAccessId: "emulator@trajectory-recorder.local",
      Expires: String(expires),
      Signature: signature,
    });
    return `${origin}${path}?${query}`;
  }

  #sign(text: string): string {
    return createHmac("sha256", this.#secret).update(text).digest("base64");
  }

  async #receive(url: URL, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const token = url.pathname.slice(UPLOAD_PREFIX.length);
    const upload = this.#uploads.get(token);
    const artifact = upload && this.#artifacts.get(upload.artifactId);
    const run = upload?.run === undefined ? undefined : this.#runs.get(upload.run);
    // Everything is checked before a byte of the body is read.
    if (!upload || !(artifact || run))
      return storageError(res, 404, "NoSuchUpload", "Unknown upload URL.");
    const expires = Number(url.searchParams.get("Expires"));
    const given = url.searchParams.get("Signature") ?? "";
    const text = stringToSign(
      req.method ?? "",
      headerValue(req, "content-md5"),
      headerValue(req, "content-type"),
      url.searchParams.get("Expires") ?? "",
      url.pathname,
    );
    if (!sameSignature(given, this.#sign(text))) {
      return storageError(
        res,
        403,
        "SignatureDoesNotMatch",
        "The request signature we calculated does not match the signature you provided. Send exactly the headers the upload URL was given with (uploadHeaders), and no Content-Type unless they name one.",
        text,
      );
    }
    if (!Number.isFinite(expires) || Date.now() / 1000 > expires) {
      return storageError(
        res,
        400,
        "ExpiredToken",
        "The upload URL has expired; ask for a new one.",
      );
    }
    const body = await readCapped(req, this.#options.maxUploadBytes);
    if (body === undefined) return tooLarge(res, this.#options.maxUploadBytes);
    const md5 = createHash("md5").update(body).digest("base64");
    const declared = headerValue(req, "content-md5");
    if (declared !== "" && declared !== md5) {
      return storageError(
        res,
        400,
        "BadDigest",
        "The Content-MD5 you specified did not match what we received.",
      );
    }
    if (run) {
      run.files.set(upload.file as string, body);
    } else if (!artifact) {
      return storageError(res, 404, "NoSuchUpload", "Unknown upload URL.");
    } else if (upload.file === null) {
      artifact.manifest = body;
    } else {
      const file = artifact.files.get(upload.file);
      if (!file || md5 !== file.md5) {
        return storageError(
          res,
          400,
          "BadDigest",
          `The uploaded ${upload.file} does not match the MD5 declared for it.`,
        );
      }
      file.data = body;
    }
    this.#uploads.delete(token);
    res.writeHead(200).end();
  }
}

function stringToSign(
  method: string,
  md5: string,
  contentType: string,
  expires: string | number,
  path: string,
): string {
  return `${method}\n${md5}\n${contentType}\n${expires}\n${path}`;
}

function sameSignature(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

function headerValue(req: IncomingMessage, name: string): string {
  const value = req.headers[name];
  return (Array.isArray(value) ? value.join(",") : (value ?? "")).trim();
}

function storageError(
  res: ServerResponse,
  status: number,
  code: string,
  message: string,
  signed?: string,
): void {
  const xmlText = (t: string) =>
    t.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  const xml = `<?xml version='1.0' encoding='UTF-8'?><Error><Code>${code}</Code><Message>${xmlText(message)}</Message>${signed === undefined ? "" : `<StringToSign>${xmlText(signed)}</StringToSign>`}</Error>`;
  // The body (if any) is left unread: the connection closes after the answer.
  res.writeHead(status, { "content-type": "application/xml; charset=UTF-8", connection: "close" });
  res.end(xml);
}

function tooLarge(res: ServerResponse, maxBytes: number): void {
  send(
    res,
    413,
    {
      errors: [
        { message: `The request body is larger than this server accepts (${maxBytes} bytes).` },
      ],
    },
    true,
  );
}

// A malformed %-escape reads as itself: it then names no run.
function decodePart(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

function isRecord(value: unknown): value is Record<string, any> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function parseJsonString(value: string, what: string): unknown {
  try {
    return JSON.parse(value);
  } catch {
    throw new GraphqlError(`${what} must be a JSON string.`);
  }
}

function parseMetadata(value: unknown): unknown {
  if (value === null || value === undefined) return null;
  try {
    return typeof value === "string" ? JSON.parse(value) : value;
  } catch {
    throw new GraphqlError("createArtifact: input.metadata must be a JSON string.");
  }
}

function send(res: ServerResponse, status: number, body: unknown, close = false): void {
  res.writeHead(status, {
    "content-type": "application/json",
    ...(close ? { connection: "close" } : {}),
  });
  res.end(JSON.stringify(body));
}

/** The body, or undefined once it passes `maxBytes` (nothing further is read). */
async function readCapped(req: IncomingMessage, maxBytes: number): Promise<Buffer | undefined> {
  const declared = Number(req.headers["content-length"]);
  if (Number.isFinite(declared) && declared > maxBytes) return undefined;
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= maxBytes) {
        chunks.push(chunk);
        return;
      }
      // Stop reading; the answer closes the connection, dropping the rest unread.
      req.off("data", onData);
      req.pause();
      resolve(undefined);
    };
    req.on("data", onData);
    req.once("end", () => resolve(Buffer.concat(chunks)));
    req.once("error", reject);
  });
}

/** W&B's global ids are base64 of `Type:key`. */
function projectId(entity: string, project: string): string {
  return Buffer.from(`Project:${entity}/${project}`).toString("base64");
}
function entityId(entity: string): string {
  return Buffer.from(`Entity:${entity}`).toString("base64");
}

/**
 * `ServerInfo` features: none is enabled, so the client takes the paths every
 * W&B server serves (the forms this emulator answers).
 */
function serverInfo() {
  return { serverInfo: { features: [] } };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
