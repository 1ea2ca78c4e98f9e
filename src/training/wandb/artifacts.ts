// SFT data as a W&B dataset artifact, saved the way the `wandb` client saves
// one (create the artifact, get upload URLs, PUT the file and the manifest,
// commit), so the service reads `wandb-artifact:///entity/project/name:v0`.
import { createHash, randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { inspect } from "node:util";
import { z } from "zod";
import { InvalidArgumentError, isObjectLike } from "../../util/argument-error.js";
import { isSafeForCredentials } from "../../util/loopback.js";
import type { Artifact, ArtifactUploader } from "../uploaders.js";
import {
  ARTIFACT_TYPE,
  ARTIFACT_VERSION,
  COMMIT_ARTIFACT,
  CREATE_ARTIFACT,
  CREATE_ARTIFACT_FILES,
  CREATE_ARTIFACT_MANIFEST,
  DEFAULT_WANDB_BASE_URL,
  finishRun,
  graphql,
  putFile,
  UPSERT_RUN,
  WandbApiError,
  type WandbConnection,
} from "./graphql.js";
import type { WandbTimeouts } from "./http.js";
import { DEFAULT_WANDB_MAX_ANSWER_BYTES, DEFAULT_WANDB_TIMEOUTS } from "./http.js";

/** Options of {@link WandbArtifactUploader}. */
export interface WandbArtifactUploaderOptions {
  /** W&B API key. Default: `process.env.WANDB_API_KEY`. */
  apiKey?: string | undefined;
  /**
   * W&B's API address (GraphQL at `<baseUrl>/graphql`). Default:
   * `process.env.WANDB_BASE_URL`, then `https://api.wandb.ai`. The emulator
   * serves this API too: give its origin (`http://127.0.0.1:<port>`).
   */
  baseUrl?: string | undefined;
  /** Entity and project of the artifact when the artifact does not name them (`trainSft` does). */
  entity?: string | undefined;
  /** Project of the artifact, as `entity`. */
  project?: string | undefined;
  /** W&B run the artifact is logged from. Default: the artifact's owner run. */
  run?: string | undefined;
  /** Artifact type. Default `"dataset"`, as ART. */
  type?: string;
  /** Name of the file inside the artifact. Default `"train.jsonl"`, as ART. */
  fileName?: string;
  /** Attempts of each call on 408/409/429/5xx, a connection error or a timeout. Default 3. */
  maxAttempts?: number;
  /**
   * Deadlines of each request: `connectMs` (default 10 s), `headersMs` (60 s),
   * `requestMs` (the whole exchange, 300 s). A request past one fails (and
   * is retried) with a {@link WandbApiError} naming the deadline.
   */
  timeouts?: WandbArtifactUploaderOptions.WandbTimeouts;
  /** Largest answer read, in bytes; a larger one fails the call. Default 4 MiB. */
  maxAnswerBytes?: number;
  /**
   * The host name sent with the run, as the `wandb` client sends the
   * machine's. Default `os.hostname()`; `null` sends none.
   */
  host?: string | null;
  /**
   * A custom fetch. Without one, requests go through node:http(s), where
   * connecting has its own deadline; with one, `timeouts.headersMs` covers it.
   */
  fetch?: typeof fetch;
}

/** The types {@link WandbArtifactUploaderOptions} uses. */
export declare namespace WandbArtifactUploaderOptions {
  export type { WandbTimeouts };
}

/**
 * Saves each upload as a new W&B artifact (type `dataset`, one file
 * `train.jsonl`, the artifact's metadata) and returns
 * `wandb-artifact:///{entity}/{project}/{name}:v{N}`, the URL ART gives the
 * service for SFT. The artifact's name is the file's name without its
 * extension (`trainSft` makes it `{model}-sft-data-{12 hex}`, unique, so the
 * version is `v0`, as ART sends). `trainSft` uses it when no uploader is given.
 *
 * @example
 * const uploader = new WandbArtifactUploader(); // WANDB_API_KEY, WANDB_BASE_URL
 * await model.trainSft(trajectories, {}, { uploader });
 */
export class WandbArtifactUploader implements ArtifactUploader {
  /** The W&B API origin the artifacts go to. */
  readonly baseUrl: string;
  readonly #apiKey: string;
  readonly #options: WandbArtifactUploaderOptions;

  constructor(options: WandbArtifactUploaderOptions = {}) {
    const call = "new WandbArtifactUploader(options)";
    if (options === null || typeof options !== "object")
      throw new InvalidArgumentError(call, "options", "an object", options);
    for (const key of ["apiKey", "baseUrl"] as const)
      if (options[key] !== undefined && typeof options[key] !== "string")
        throw new InvalidArgumentError(call, `options.${key}`, "a string", options[key]);
    const apiKey = options.apiKey ?? process.env.WANDB_API_KEY;
    if (!apiKey) {
      throw new InvalidArgumentError(
        call,
        "options.apiKey",
        "a W&B API key",
        apiKey,
        "expected a W&B API key (pass { apiKey } or set WANDB_API_KEY), received none",
      );
    }
    const baseUrl = (options.baseUrl ?? process.env.WANDB_BASE_URL ?? DEFAULT_WANDB_BASE_URL)
      .trim()
      .replace(/\/+$/, "");
    if (!URL.canParse(baseUrl))
      throw new InvalidArgumentError(call, "options.baseUrl", "an https:// URL", baseUrl);
    const where = new URL(baseUrl);
    // The key travels in every request: never in clear text off this machine.
    if (!isSafeForCredentials(where)) {
      throw new InvalidArgumentError(
        call,
        "options.baseUrl",
        "an https:// base URL",
        baseUrl,
        // The host, not the whole URL: user:password@ stays out of the message.
        `expected an https:// base URL (http:// only on loopback), received ${where.protocol}//${where.host}`,
      );
    }
    checkLimits(call, options);
    this.baseUrl = baseUrl;
    this.#apiKey = apiKey;
    this.#options = { ...options, apiKey: undefined };
  }

  /** What `console.log` shows: never the key. */
  [inspect.custom](): string {
    return `WandbArtifactUploader { baseUrl: ${JSON.stringify(this.baseUrl.replace(/\/\/[^/@]*@/, "//[redacted]@"))}, apiKey: '[redacted]' }`;
  }

  /** What `JSON.stringify` writes: the base URL, never the key. */
  toJSON(): Record<string, unknown> {
    return { baseUrl: this.baseUrl };
  }

  /** Logs the artifact to W&B and resolves with its `wandb-artifact:///entity/project/name:v0` URL. */
  async upload(artifact: Artifact, options: { signal?: AbortSignal } = {}): Promise<string> {
    const entity = artifact.owner?.entity ?? this.#options.entity;
    const project = artifact.owner?.project ?? this.#options.project;
    const run = this.#options.run ?? artifact.owner?.run;
    if (!entity || !project || !run) {
      throw new InvalidArgumentError(
        "WandbArtifactUploader.upload",
        `artifact.owner.${!entity ? "entity" : !project ? "project" : "run"}`,
        "",
        undefined,
        `${artifact.name} names no ${!entity ? "entity" : !project ? "project" : "run"}; pass it in the uploader's options`,
      );
    }
    const conn: WandbConnection = {
      baseUrl: this.baseUrl,
      apiKey: this.#apiKey,
      fetch: this.#options.fetch,
      maxAttempts: this.#options.maxAttempts ?? 3,
      timeouts: { ...DEFAULT_WANDB_TIMEOUTS, ...this.#options.timeouts },
      maxAnswerBytes: this.#options.maxAnswerBytes ?? DEFAULT_WANDB_MAX_ANSWER_BYTES,
      signal: options.signal,
    };
    const type = this.#options.type ?? "dataset";
    const host = this.#options.host === undefined ? hostname() : this.#options.host;

    // The run the artifact is logged from, as ART's `wandb.init(id=run, name=model,
    // resume="allow")`: its id, display name and host; no config, so that a
    // resumed run keeps the one its trainer gave it.
    await graphql(
      conn,
      "UpsertBucket",
      UPSERT_RUN,
      {
        name: run,
        project,
        entity,
        ...(artifact.owner?.displayName ? { displayName: artifact.owner.displayName } : {}),
        ...(host ? { host } : {}),
      },
      UpsertedRun,
    );
    let url: string;
    try {
      url = await this.#save(conn, artifact, { entity, project, run, type });
    } catch (error) {
      // As `run.finish()` in ART's `finally`: the run ends even when the upload failed;
      // the upload's error is the one reported.
      if (!options.signal?.aborted) await finishRun(conn, { entity, project, run }).catch(() => {});
      throw error;
    }
    await finishRun(conn, { entity, project, run });
    return url;
  }

  async #save(
    conn: WandbConnection,
    artifact: Artifact,
    where: { entity: string; project: string; run: string; type: string },
  ): Promise<string> {
    const { entity, project, run, type } = where;
    const name = artifact.name.replace(/\.[^.]+$/, "");
    const fileName = this.#options.fileName ?? "train.jsonl";
    const data = artifact.data;
    const fileMd5 = createHash("md5").update(data).digest("base64");
    const scope = { entityName: entity, projectName: project, runName: run };

    // The client first asks which type the name already has, and refuses a clash.
    const existing = await graphql(
      conn,
      "ArtifactType",
      ARTIFACT_TYPE,
      { entityName: entity, projectName: project, name: `${name}:latest` },
      KnownType,
    );
    const knownType = existing.project?.artifact?.artifactType?.name;
    if (knownType && knownType !== type) {
      throw new WandbApiError(
        "ArtifactType",
        `W&B already holds an artifact named ${name} of type ${knownType}; this one is of type ${type}. Choose another name or type.`,
      );
    }
    const created = await graphql(
      conn,
      "CreateArtifact",
      CREATE_ARTIFACT,
      {
        ...scope,
        artifactTypeName: type,
        artifactCollectionName: name,
        digest: manifestDigest({ [fileName]: fileMd5 }),
        description: null,
        metadata: artifact.metadata ? JSON.stringify(artifact.metadata) : null,
        aliases: [{ artifactCollectionName: name, alias: "latest" }],
        clientID: randomId(),
        sequenceClientID: randomId(),
      },
      CreatedArtifact,
    );
    const { id, state } = created.createArtifact.artifact;
    const url = async () => {
      const found = await graphql(conn, "ArtifactByID", ARTIFACT_VERSION, { id }, ArtifactVersion);
      // A new name's first version is v0, which is what ART sends without asking.
      const version = found.artifact?.versionIndex ?? 0;
      return `wandb-artifact:///${entity}/${project}/${name}:v${version}`;
    };
    // The same content is already saved under this name: nothing to upload.
    if (state === "COMMITTED") return url();
    const baseArtifactID = created.createArtifact.artifact.artifactSequence?.latestArtifact?.id;
    const manifestVars = {
      ...scope,
      artifactID: id,
      baseArtifactID: baseArtifactID ?? null,
      name: "wandb_manifest.json",
      manifestType: "FULL",
    };
    const draft = await graphql(
      conn,
      "CreateArtifactManifest",
      CREATE_ARTIFACT_MANIFEST,
      { ...manifestVars, digest: "", includeUpload: false },
      CreatedManifest,
    );
    const files = await graphql(
      conn,
      "CreateArtifactFiles",
      CREATE_ARTIFACT_FILES,
      {
        input: {
          storageLayout: "V2",
          artifactFiles: [
            {
              artifactID: id,
              name: fileName,
              md5: fileMd5,
              artifactManifestID: draft.createArtifactManifest.artifactManifest.id,
            },
          ],
        },
      },
      CreatedFiles,
    );
    const edges = files.createArtifactFiles.files.edges;
    if (edges.length !== 1) {
      throw new WandbApiError(
        "CreateArtifactFiles",
        `W&B CreateArtifactFiles answered ${edges.length} files for the 1 asked.`,
      );
    }
    const node = edges[0]?.node;
    // No upload URL: the server already holds a file with this digest.
    if (node?.uploadUrl) {
      checkUploadUrl(node.uploadUrl, this.baseUrl);
      await putFile(conn, fileName, node.uploadUrl, node.uploadHeaders, data);
    }

    const manifest = JSON.stringify({
      version: 1,
      storagePolicy: "wandb-storage-policy-v1",
      storagePolicyConfig: { storageLayout: "V2" },
      contents: {
        [fileName]: {
          digest: fileMd5,
          birthArtifactID: node?.artifact?.id ?? id,
          size: byteLength(data),
        },
      },
    });
    const final = await graphql(
      conn,
      "CreateArtifactManifest",
      CREATE_ARTIFACT_MANIFEST,
      {
        ...manifestVars,
        digest: createHash("md5").update(manifest).digest("base64"),
        includeUpload: true,
      },
      CreatedManifest,
    );
    const manifestFile = final.createArtifactManifest.artifactManifest.file;
    if (!manifestFile?.uploadUrl) {
      throw new WandbApiError(
        "CreateArtifactManifest",
        `W&B gave no upload URL for the manifest of ${name}.`,
      );
    }
    checkUploadUrl(manifestFile.uploadUrl, this.baseUrl);
    await putFile(
      conn,
      "wandb_manifest.json",
      manifestFile.uploadUrl,
      manifestFile.uploadHeaders,
      manifest,
    );
    await graphql(conn, "CommitArtifact", COMMIT_ARTIFACT, { artifactID: id }, Committed);
    return url();
  }
}

// The shapes of the answers' `data`, checked before anything in them is used.
const id = z.string().min(1);
const UpsertedRun = z.looseObject({
  upsertBucket: z.looseObject({ bucket: z.looseObject({ id, name: z.string() }) }),
});
const KnownType = z.looseObject({
  project: z
    .looseObject({
      artifact: z
        .looseObject({ artifactType: z.looseObject({ name: z.string() }).nullish() })
        .nullish(),
    })
    .nullish(),
});
const CreatedArtifact = z.looseObject({
  createArtifact: z.looseObject({
    artifact: z.looseObject({
      id,
      state: z.string(),
      artifactSequence: z
        .looseObject({ latestArtifact: z.looseObject({ id }).nullish() })
        .nullish(),
    }),
  }),
});
const ArtifactVersion = z.looseObject({
  artifact: z.looseObject({ id, versionIndex: z.number().int().min(0).nullish() }).nullable(),
});
const uploadHeaders = z.array(z.string()).nullish();
const CreatedManifest = z.looseObject({
  createArtifactManifest: z.looseObject({
    artifactManifest: z.looseObject({
      id,
      file: z.looseObject({ id, uploadUrl: z.string().nullish(), uploadHeaders }).nullish(),
    }),
  }),
});
const CreatedFiles = z.looseObject({
  createArtifactFiles: z.looseObject({
    files: z.looseObject({
      edges: z.array(
        z.looseObject({
          node: z.looseObject({
            uploadUrl: z.string().nullish(),
            uploadHeaders,
            artifact: z.looseObject({ id }).nullish(),
          }),
        }),
      ),
    }),
  }),
});
const Committed = z.looseObject({
  commitArtifact: z.looseObject({ artifact: z.looseObject({ id }) }),
});

// An upload URL is a credential of its own (signed); the data goes only where
// it may travel in clear text: https, or http to this machine.
function checkUploadUrl(uploadUrl: string, baseUrl: string): void {
  if (!URL.canParse(uploadUrl) || !isSafeForCredentials(new URL(uploadUrl))) {
    const shown = URL.canParse(uploadUrl) ? new URL(uploadUrl).host : "(not a URL)";
    throw new WandbApiError(
      "upload",
      `W&B at ${new URL(baseUrl).host} gave an upload URL that is neither https:// nor on loopback (${shown}); nothing was sent there.`,
    );
  }
}

function checkLimits(call: string, options: WandbArtifactUploaderOptions): void {
  const positive = (v: unknown) => typeof v === "number" && Number.isFinite(v) && v > 0;
  if (
    options.maxAttempts !== undefined &&
    !(Number.isInteger(options.maxAttempts) && options.maxAttempts >= 1)
  )
    throw new InvalidArgumentError(
      call,
      "options.maxAttempts",
      "an integer of at least 1",
      options.maxAttempts,
    );
  if (options.maxAnswerBytes !== undefined && !positive(options.maxAnswerBytes))
    throw new InvalidArgumentError(
      call,
      "options.maxAnswerBytes",
      "a positive number of bytes",
      options.maxAnswerBytes,
    );
  if (options.host !== undefined && options.host !== null && typeof options.host !== "string")
    throw new InvalidArgumentError(call, "options.host", "a string or null", options.host);
  const t = options.timeouts;
  if (t === undefined) return;
  if (!isObjectLike(t))
    throw new InvalidArgumentError(
      call,
      "options.timeouts",
      "an object { connectMs, headersMs, requestMs }",
      t,
    );
  for (const key of ["connectMs", "headersMs", "requestMs"] as const)
    if (t[key] !== undefined && !positive(t[key]))
      throw new InvalidArgumentError(
        call,
        `options.timeouts.${key}`,
        "a positive number of milliseconds",
        t[key],
      );
}

/**
 * W&B's artifact digest: MD5 (hex) over a header and each `name:digest` line,
 * by name; the digests are the files' base64 MD5s.
 *
 * @example
 * manifestDigest({ "train.jsonl": "1B2M2Y8AsgTpgAmY7PhCfg==" });
 */
export function manifestDigest(contents: Record<string, string>): string {
  if (!isObjectLike(contents) || Array.isArray(contents))
    throw new InvalidArgumentError(
      "manifestDigest(contents)",
      "contents",
      "an object of file names to digests",
      contents,
    );
  for (const [name, digest] of Object.entries(contents))
    if (typeof digest !== "string")
      throw new InvalidArgumentError(
        "manifestDigest(contents)",
        `contents[${JSON.stringify(name)}]`,
        "a digest string",
        digest,
      );
  const hash = createHash("md5").update("wandb-artifact-manifest-v1\n");
  for (const name of Object.keys(contents).sort()) hash.update(`${name}:${contents[name]}\n`);
  return hash.digest("hex");
}

function byteLength(data: string | Uint8Array): number {
  return typeof data === "string" ? Buffer.byteLength(data) : data.byteLength;
}

// Ids the client picks to recognise its own artifact; any unique string serves.
function randomId(): string {
  return randomBytes(32).toString("hex");
}
