// W&B's artifact surface, as `log_artifact` and the public API use it:
// ArtifactType, CreateArtifact (input as an object or as flat variables),
// CreateArtifactManifest, CreateArtifactFiles (`$input` or `$artifactFiles`),
// CommitArtifact and ArtifactByID; and the reader SFT jobs take their
// `wandb-artifact:///entity/project/name:vN` data from.
import { randomUUID } from "node:crypto";
import { type Caller, entityFor, GraphqlError, type Vars } from "./graphql.js";
import { isRecord, projectId, wandbNow } from "./http.js";
import type { UploadUrls } from "./uploads.js";

export interface StoredFile {
  md5: string;
  data?: Buffer;
}
export interface StoredArtifact {
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

/** The artifacts logged to the emulator, in memory. */
export class WandbArtifacts {
  readonly #artifacts = new Map<string, StoredArtifact>();

  constructor(private readonly uploads: UploadUrls) {}

  /** An artifact by id, for an upload of one of its files. */
  get(id: string): StoredArtifact | undefined {
    return this.#artifacts.get(id);
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

  /** `project { artifact(name: "collection:alias") { artifactType } }`. */
  type(v: Vars, caller: Caller) {
    const entity = entityFor(caller, v.entityName);
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

  create(input: Vars, caller: Caller) {
    const entity = entityFor(caller, input.entityName);
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
      createdAt: wandbNow(),
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

  createManifest(v: Vars, caller: Caller, origin: string) {
    const artifact = this.#artifact(v.artifactID, caller);
    if (typeof v.digest !== "string")
      throw new GraphqlError("createArtifactManifest: digest must be a string.");
    const file: Record<string, unknown> = { id: `${artifact.id}-manifest` };
    if (v.includeUpload === true) {
      artifact.manifestDigest = v.digest;
      const md5 = v.digest === "" ? "" : v.digest;
      file.uploadUrl = this.uploads.url(origin, { artifactId: artifact.id, file: null }, md5);
      file.uploadHeaders = md5 ? [`Content-MD5:${md5}`] : [];
    }
    return {
      createArtifactManifest: { artifactManifest: { id: `${artifact.id}-manifest`, file } },
    };
  }

  createFiles(v: Vars, caller: Caller, origin: string) {
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
        : this.uploads.url(origin, { artifactId: artifact.id, file: spec.name }, spec.md5);
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

  commit(v: Vars, caller: Caller) {
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
      artifact.updatedAt = wandbNow();
    }
    return { commitArtifact: { artifact: { id: artifact.id, digest: artifact.digest } } };
  }

  /** `ArtifactByID`: W&B's whole artifact fragment, as the client validates it. */
  byId(v: Vars, caller: Caller) {
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

  #artifact(id: unknown, caller: Caller): StoredArtifact {
    const artifact = typeof id === "string" ? this.#artifacts.get(id) : undefined;
    if (!artifact || (!caller.anyEntity && artifact.entity !== caller.entity)) {
      throw new GraphqlError(`Artifact ${String(id)} not found.`);
    }
    return artifact;
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
