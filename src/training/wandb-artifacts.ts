// SFT data as a W&B dataset artifact, saved the way the `wandb` client saves
// one (create the artifact, get upload URLs, PUT the file and the manifest,
// commit), so the service reads `wandb-artifact:///entity/project/name:v0`.
import { createHash, randomBytes } from "node:crypto";
import { InvalidArgumentError, isObjectLike } from "../util/argument-error.js";
import type { Artifact, ArtifactUploader } from "./uploaders.js";
import {
  ARTIFACT_VERSION,
  COMMIT_ARTIFACT,
  CREATE_ARTIFACT,
  CREATE_ARTIFACT_FILES,
  CREATE_ARTIFACT_MANIFEST,
  DEFAULT_WANDB_BASE_URL,
  graphql,
  putFile,
  UPSERT_RUN,
  type WandbConnection,
} from "./wandb-graphql.js";

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
  project?: string | undefined;
  /** W&B run the artifact is logged from. Default: the artifact's owner run. */
  run?: string | undefined;
  /** Artifact type. Default `"dataset"`, as ART. */
  type?: string;
  /** Name of the file inside the artifact. Default `"train.jsonl"`, as ART. */
  fileName?: string;
  /** Attempts of each call on 408/409/429/5xx or a connection error. Default 3. */
  maxAttempts?: number;
  fetch?: typeof fetch;
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
    if (
      where.protocol !== "https:" &&
      !(where.protocol === "http:" && isLoopback(where.hostname))
    ) {
      throw new InvalidArgumentError(
        call,
        "options.baseUrl",
        "an https:// base URL",
        baseUrl,
        // The host, not the whole URL: user:password@ stays out of the message.
        `expected an https:// base URL (http:// only on loopback), received ${where.protocol}//${where.host}`,
      );
    }
    this.baseUrl = baseUrl;
    this.#apiKey = apiKey;
    this.#options = options;
  }

  async upload(artifact: Artifact, options: { signal?: AbortSignal } = {}): Promise<string> {
    const entity = artifact.owner?.entity ?? this.#options.entity;
    const project = artifact.owner?.project ?? this.#options.project;
    const run = this.#options.run ?? artifact.owner?.run;
    if (!entity || !project || !run) {
      throw new TypeError(
        `WandbArtifactUploader: ${artifact.name} names no ${!entity ? "entity" : !project ? "project" : "run"}; pass it in the uploader's options.`,
      );
    }
    const conn: WandbConnection = {
      baseUrl: this.baseUrl,
      apiKey: this.#apiKey,
      fetch: this.#options.fetch ?? fetch,
      maxAttempts: this.#options.maxAttempts ?? 3,
      signal: options.signal,
    };
    const name = artifact.name.replace(/\.[^.]+$/, "");
    const fileName = this.#options.fileName ?? "train.jsonl";
    const data = artifact.data;
    const fileMd5 = createHash("md5").update(data).digest("base64");
    const scope = { entityName: entity, projectName: project, runName: run };

    // The run the artifact is logged from (ART logs it from the model's run).
    await graphql(conn, "UpsertBucket", UPSERT_RUN, { name: run, project, entity });
    const created = await graphql<CreatedArtifact>(conn, "CreateArtifact", CREATE_ARTIFACT, {
      input: {
        ...scope,
        artifactTypeName: this.#options.type ?? "dataset",
        artifactCollectionName: name,
        digest: manifestDigest({ [fileName]: fileMd5 }),
        digestAlgorithm: "MANIFEST_MD5",
        description: null,
        metadata: artifact.metadata ? JSON.stringify(artifact.metadata) : null,
        aliases: [{ artifactCollectionName: name, alias: "latest" }],
        enableDigestDeduplication: true,
        clientID: randomId(),
        sequenceClientID: randomId(),
      },
    });
    const { id, state } = created.createArtifact.artifact;
    const url = async () => {
      const found = await graphql<ArtifactVersion>(conn, "ArtifactByID", ARTIFACT_VERSION, { id });
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
    const draft = await graphql<CreatedManifest>(
      conn,
      "CreateArtifactManifest",
      CREATE_ARTIFACT_MANIFEST,
      { ...manifestVars, digest: "", includeUpload: false },
    );
    const files = await graphql<CreatedFiles>(conn, "CreateArtifactFiles", CREATE_ARTIFACT_FILES, {
      storageLayout: "V2",
      artifactFiles: [
        {
          artifactID: id,
          name: fileName,
          md5: fileMd5,
          artifactManifestID: draft.createArtifactManifest.artifactManifest.id,
        },
      ],
    });
    const node = files.createArtifactFiles.files.edges[0]?.node;
    // No upload URL: the server already holds a file with this digest.
    if (node?.uploadUrl) await putFile(conn, fileName, node.uploadUrl, node.uploadHeaders, data);

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
    const final = await graphql<CreatedManifest>(
      conn,
      "CreateArtifactManifest",
      CREATE_ARTIFACT_MANIFEST,
      {
        ...manifestVars,
        digest: createHash("md5").update(manifest).digest("base64"),
        includeUpload: true,
      },
    );
    const manifestFile = final.createArtifactManifest.artifactManifest.file;
    if (!manifestFile?.uploadUrl) {
      throw new TypeError(`W&B gave no upload URL for the manifest of ${name}.`);
    }
    await putFile(
      conn,
      "wandb_manifest.json",
      manifestFile.uploadUrl,
      manifestFile.uploadHeaders,
      manifest,
    );
    await graphql(conn, "CommitArtifact", COMMIT_ARTIFACT, { artifactID: id });
    return url();
  }
}

interface CreatedArtifact {
  createArtifact: {
    artifact: {
      id: string;
      state: string;
      artifactSequence?: { latestArtifact?: { id: string } | null } | null;
    };
  };
}
interface ArtifactVersion {
  artifact: { id: string; versionIndex?: number | null } | null;
}
interface CreatedManifest {
  createArtifactManifest: {
    artifactManifest: {
      id: string;
      file?: { id: string; uploadUrl?: string | null; uploadHeaders?: string[] | null };
    };
  };
}
interface CreatedFiles {
  createArtifactFiles: {
    files: {
      edges: {
        node: {
          uploadUrl?: string | null;
          uploadHeaders?: string[] | null;
          artifact?: { id: string };
        };
      }[];
    };
  };
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

function isLoopback(hostname: string): boolean {
  return hostname === "localhost" || hostname === "[::1]" || hostname.startsWith("127.");
}
