// The subset of W&B's API that saving a dataset artifact takes, served on the
// emulator's own port: `POST /graphql` (UpsertBucket, CreateArtifact,
// CreateArtifactManifest, CreateArtifactFiles, CommitArtifact, ArtifactByID,
// with their arguments as variables, as the `wandb` client sends them) and
// `PUT /wandb-uploads/<token>` for the upload URLs it hands out. SFT jobs read
// `wandb-artifact:///entity/project/name:vN` from here. Artifacts live in
// memory, for the life of the process.
import { createHash, randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";

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
}
interface Upload {
  artifactId: string;
  /** A file of the artifact, or null for its manifest. */
  file: string | null;
}
/** Who calls: the key's entity, or any entity when the emulator takes any key. */
interface Caller {
  entity: string;
  anyEntity: boolean;
}
type Vars = Record<string, any>;

class GraphqlError extends Error {}

const UPLOAD_PREFIX = "/wandb-uploads/";

/** W&B's artifact API in the emulator, and the reader of its artifacts for SFT jobs. */
export class WandbArtifactApi {
  readonly #artifacts = new Map<string, StoredArtifact>();
  readonly #uploads = new Map<string, Upload>();

  /** @param keys key → entity, as the emulator's; undefined takes any key as `local`. */
  constructor(private readonly keys: Map<string, string> | undefined) {}

  /** Whether this request is for W&B's API rather than the Training Service's. */
  handles(method: string, pathname: string): boolean {
    return (
      (method === "POST" && pathname === "/graphql") ||
      (method === "PUT" && pathname.startsWith(UPLOAD_PREFIX))
    );
  }

  async serve(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const body = await readBody(req);
    if (url.pathname.startsWith(UPLOAD_PREFIX)) {
      return this.#receive(url.pathname.slice(UPLOAD_PREFIX.length), req, body, res);
    }
    const caller = this.#caller(req);
    if (!caller) {
      return send(res, 401, {
        errors: [{ message: "Missing or unknown API key: send HTTP Basic auth api:<key>." }],
      });
    }
    let request: { query?: unknown; variables?: unknown; operationName?: unknown };
    try {
      request = JSON.parse(body.toString("utf8"));
    } catch {
      return send(res, 400, { errors: [{ message: "The request body is not JSON." }] });
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
    const versions = [...this.#artifacts.values()]
      .filter(
        (a) =>
          a.entity === owner &&
          a.project === project &&
          a.collection === collection &&
          a.state === "COMMITTED",
      )
      .sort((a, b) => a.versionIndex - b.versionIndex);
    const version = /^v(\d+)$/.exec(alias as string);
    const artifact =
      alias === "latest"
        ? versions.at(-1)
        : versions.find((a) => version && a.versionIndex === Number(version[1]));
    // Another entity's artifact reads exactly as a missing one.
    if (!artifact || (entity !== undefined && artifact.entity !== entity)) {
      return { error: `No committed W&B artifact ${owner}/${project}/${collection}:${alias}.` };
    }
    const files = [...artifact.files.entries()];
    const [, file] = files.find(([name]) => name === "train.jsonl") ?? files[0] ?? [];
    if (!file?.data) return { error: `Artifact ${collection}:${alias} holds no file.` };
    return { text: file.data.toString("utf8") };
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

  #operate(
    request: { query?: unknown; operationName?: unknown },
    v: Vars,
    caller: Caller,
    origin: string,
  ) {
    const query = typeof request.query === "string" ? request.query : "";
    const has = (field: string) => new RegExp(`\\b${field}\\s*\\(`).test(query);
    if (has("upsertBucket")) return this.#upsertRun(v, caller);
    if (has("createArtifact")) return this.#createArtifact(v.input ?? {}, caller);
    if (has("createArtifactManifest")) return this.#createManifest(v, caller, origin);
    if (has("createArtifactFiles")) return this.#createFiles(v, caller, origin);
    if (has("commitArtifact")) return this.#commit(v, caller);
    if (has("artifact")) return this.#version(v, caller);
    throw new GraphqlError(
      "The emulator serves only the artifact operations of W&B's API: UpsertBucket, CreateArtifact, CreateArtifactManifest, CreateArtifactFiles, CommitArtifact, ArtifactByID.",
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
    this.#entity(caller, v.entity);
    const name = typeof v.name === "string" && v.name ? v.name : randomUUID().slice(0, 8);
    return { upsertBucket: { bucket: { id: name, name }, inserted: true } };
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
    const file: Record<string, unknown> = { id: `${artifact.id}-manifest` };
    if (v.includeUpload === true) {
      file.uploadUrl = this.#uploadUrl(origin, { artifactId: artifact.id, file: null });
      file.uploadHeaders = [];
    }
    return {
      createArtifactManifest: { artifactManifest: { id: `${artifact.id}-manifest`, file } },
    };
  }

  #createFiles(v: Vars, caller: Caller, origin: string) {
    const specs = Array.isArray(v.artifactFiles) ? (v.artifactFiles as Vars[]) : [];
    const edges = specs.map((spec) => {
      const artifact = this.#artifact(spec.artifactID, caller);
      if (typeof spec.name !== "string" || typeof spec.md5 !== "string") {
        throw new GraphqlError("createArtifactFiles: each file needs a name and an md5.");
      }
      const known = artifact.files.get(spec.name);
      const stored = known?.md5 === spec.md5 && known.data ? known : { md5: spec.md5 };
      artifact.files.set(spec.name, stored);
      const uploadUrl = stored.data
        ? null
        : this.#uploadUrl(origin, { artifactId: artifact.id, file: spec.name });
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
    }
    return { commitArtifact: { artifact: { id: artifact.id, digest: artifact.digest } } };
  }

  #version(v: Vars, caller: Caller) {
    const artifact = this.#artifact(v.id, caller);
    const committed = artifact.state === "COMMITTED";
    return {
      artifact: { id: artifact.id, versionIndex: committed ? artifact.versionIndex : null },
    };
  }

  #uploadUrl(origin: string, upload: Upload): string {
    const token = randomUUID();
    this.#uploads.set(token, upload);
    return `${origin}${UPLOAD_PREFIX}${token}`;
  }

  #receive(token: string, req: IncomingMessage, body: Buffer, res: ServerResponse): void {
    const upload = this.#uploads.get(token);
    const artifact = upload && this.#artifacts.get(upload.artifactId);
    if (!upload || !artifact) {
      send(res, 404, { detail: "Unknown upload URL." });
      return;
    }
    if (upload.file === null) {
      artifact.manifest = body;
    } else {
      const file = artifact.files.get(upload.file);
      const md5 = createHash("md5").update(body).digest("base64");
      const declared = req.headers["content-md5"];
      if (!file || md5 !== file.md5 || (declared !== undefined && declared !== md5)) {
        send(res, 400, {
          detail: `The uploaded ${upload.file} does not match the MD5 declared for it.`,
        });
        return;
      }
      file.data = body;
    }
    this.#uploads.delete(token);
    res.writeHead(200).end();
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

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}
