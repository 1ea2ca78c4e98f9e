// Where SFT training files go before a job can read them.
import path from "node:path";
import { pathToFileURL } from "node:url";
import { abortableSleep, isRetryableStatus, retryDelay } from "../client/index.js";
import { InvalidArgumentError } from "../util/argument-error.js";
import { atomicWriteFile } from "../util/atomic-write.js";
import { isSafeForCredentials } from "../util/loopback.js";

/** A file to upload. */
export interface Artifact {
  /** A file name, e.g. `agent-001-sft-data-1a2b3c4d5e6f.jsonl`. */
  name: string;
  /** The bytes (or text) to upload. */
  data: string | Uint8Array;
  /** Its MIME type, e.g. `application/jsonl`. */
  contentType: string;
  /** Whose data it is: the model's entity, project and W&B run (`trainSft` sets it). */
  owner?: Artifact.ArtifactOwner;
  /** Facts about the data; `trainSft` sets `{ format: "jsonl", num_trajectories }`. */
  metadata?: Record<string, unknown>;
}

/** The types of {@link Artifact}'s fields. */
export declare namespace Artifact {
  export type { ArtifactOwner };
}

/** The entity, project and W&B run an artifact belongs to. */
export interface ArtifactOwner {
  /** The team or user. */
  entity: string;
  /** The project. */
  project: string;
  /** The W&B run the data is logged from (a model's `runId`, else its name). */
  run: string;
  /** The run's display name (the model's name, as ART's `wandb.init(name=...)`). */
  displayName?: string;
}

/**
 * Puts a training file somewhere the service can read it, and returns the URL
 * given to the job as `training_data_url`.
 *
 * @example
 * const uploader: ArtifactUploader = { upload: async (a) => myStore.put(a.name, a.data) };
 */
export interface ArtifactUploader {
  /** Stores `artifact` and resolves with the URL the Training Service reads it from. */
  upload(artifact: Artifact, options?: { signal?: AbortSignal }): Promise<string>;
}

/**
 * Writes artifacts into a local directory and returns `file://` URLs: for the
 * emulator and for services that share a filesystem with you.
 *
 * @example
 * await model.trainSft(trajectories, {}, { uploader: new LocalFileUploader("./artifacts") });
 */
export class LocalFileUploader implements ArtifactUploader {
  /** The directory the files are written into (absolute). */
  readonly dir: string;
  constructor(dir: string) {
    if (typeof dir !== "string" || dir === "")
      throw new InvalidArgumentError("new LocalFileUploader(dir)", "dir", "a directory path", dir);
    this.dir = path.resolve(dir);
  }
  /** Writes the artifact under {@link LocalFileUploader.dir} and resolves with its `file://` URL. */
  async upload(artifact: Artifact): Promise<string> {
    checkArtifact("LocalFileUploader.upload(artifact)", artifact);
    const file = path.join(this.dir, path.basename(artifact.name));
    await atomicWriteFile(file, artifact.data);
    return pathToFileURL(file).href;
  }
}

/** The types {@link PresignedUrlUploaderOptions} uses. */
export declare namespace PresignedUrlUploaderOptions {
  export type { PresignedTarget };
}

/** A pre-signed upload target: where to PUT, and the URL the service reads from. */
export interface PresignedTarget {
  /** The pre-signed URL that accepts a PUT. */
  uploadUrl: string;
  /** The URL given to the job. Default: `uploadUrl` without its query string. */
  url?: string;
}

/** Options of {@link PresignedUrlUploader}. */
export interface PresignedUrlUploaderOptions {
  /** Returns a fresh pre-signed target for a file name. */
  presign: (
    name: string,
  ) =>
    | Promise<PresignedUrlUploaderOptions.PresignedTarget>
    | PresignedUrlUploaderOptions.PresignedTarget;
  /** Attempts of the PUT on 408/429/5xx or a connection error. Default 3. */
  maxAttempts?: number;
  /** The `fetch` used for the PUT. Default: the global one. */
  fetch?: typeof fetch;
}

/**
 * PUTs artifacts to pre-signed `https://` URLs (S3, GCS, Azure SAS...) and
 * returns the URL the service reads.
 *
 * @example
 * const uploader = new PresignedUrlUploader({ presign: (name) => myBackend.presign(name) });
 */
export class PresignedUrlUploader implements ArtifactUploader {
  readonly #options: PresignedUrlUploaderOptions;
  constructor(options: PresignedUrlUploaderOptions) {
    if (typeof options?.presign !== "function")
      throw new InvalidArgumentError(
        "new PresignedUrlUploader(options)",
        options === null || typeof options !== "object" ? "options" : "options.presign",
        "a function returning { uploadUrl }",
        options === null || typeof options !== "object" ? options : options.presign,
      );
    this.#options = options;
  }

  /** PUTs the artifact to the URL the signer gave and resolves with the URL to read it from. */
  async upload(artifact: Artifact, options: { signal?: AbortSignal } = {}): Promise<string> {
    checkArtifact("PresignedUrlUploader.upload(artifact)", artifact);
    const target = await this.#options.presign(artifact.name);
    const doFetch = this.#options.fetch ?? fetch;
    const attempts = this.#options.maxAttempts ?? 3;
    const where = new URL(target.uploadUrl);
    // The URL carries a credential: never send it in clear text off this machine.
    if (!isSafeForCredentials(where)) {
      throw new InvalidArgumentError(
        "PresignedUrlUploader",
        "uploadUrl",
        "",
        undefined,
        `expected an https:// upload URL (http:// only on loopback), got ${where.protocol}//${where.host}`,
      );
    }
    const readUrl = target.url ?? `${where.origin}${where.pathname}`;
    for (let attempt = 0; ; attempt++) {
      let failure: string;
      let headers: Headers | undefined;
      try {
        const response = await doFetch(target.uploadUrl, {
          method: "PUT",
          body:
            typeof artifact.data === "string"
              ? artifact.data
              : new Blob([artifact.data as Uint8Array<ArrayBuffer>]),
          headers: { "content-type": artifact.contentType },
          signal: options.signal,
        });
        if (response.ok) return readUrl;
        failure = `answered ${response.status}`;
        headers = response.headers;
        if (!isRetryableStatus(response.status)) attempt = attempts;
      } catch (error) {
        if (options.signal?.aborted) throw error;
        failure = `failed: ${(error as Error).message}`;
      }
      if (attempt + 1 >= attempts) {
        // The pre-signed query string is a credential: name only the host and path.
        throw new Error(`Uploading ${artifact.name} to ${readUrl} ${failure}.`);
      }
      await abortableSleep(retryDelay(attempt, { headers, initialDelayMs: 200 }), options.signal);
    }
  }
}

/** Throws {@link InvalidArgumentError} unless `artifact` has a file name and its data. */
function checkArtifact(call: string, artifact: unknown): asserts artifact is Artifact {
  if (artifact === null || typeof artifact !== "object")
    throw new InvalidArgumentError(call, "artifact", "an object with name and data", artifact);
  const { name, data } = artifact as { name?: unknown; data?: unknown };
  if (typeof name !== "string" || path.basename(name) === "" || name.endsWith("/"))
    throw new InvalidArgumentError(call, "artifact.name", "a file name", name);
  if (typeof data !== "string" && !(data instanceof Uint8Array))
    throw new InvalidArgumentError(call, "artifact.data", "a string or a Uint8Array", data);
}
