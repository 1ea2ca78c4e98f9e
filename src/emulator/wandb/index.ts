// The subset of W&B's API that saving a dataset artifact takes, served on the
// emulator's own port in the forms the `wandb` client's core (0.30, as ART's
// `_train_sft` drives it) sends. Two surfaces, each in its file: runs
// (runs.ts) and artifacts (artifacts.ts), with the signed upload URLs both
// hand out (uploads.ts). Requests reach them through two tables: the routes, by
// method and path, OPERATIONS by the root field a GraphQL document selects.
// The key is checked before a body is read, and bodies are capped (413).
// Everything lives in memory, for the life of the process.
import { createHash } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { findJsonProblem } from "../../util/json-check.js";
import { WandbArtifacts } from "./artifacts.js";
import {
  type Caller,
  callerOf,
  GraphqlError,
  type RootField,
  rootFields,
  type Vars,
} from "./graphql.js";
import { headerValue, isRecord, readCapped, send, storageError, tooLarge } from "./http.js";
import { serverInfo, viewer, WandbRuns } from "./runs.js";
import { UPLOAD_PREFIX, UploadUrls } from "./uploads.js";

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

/** What a GraphQL operation is given: the surfaces, and the request. */
interface Operation {
  runs: WandbRuns;
  artifacts: WandbArtifacts;
  v: Vars;
  caller: Caller;
  origin: string;
  field: RootField;
}

/** The root field a GraphQL document selects to the operation that answers it. */
const OPERATIONS: Record<string, (op: Operation) => unknown> = {
  upsertBucket: ({ runs, v, caller }) => runs.upsert(v, caller),
  model: ({ runs, v, caller }) => runs.resumeStatus(v, caller),
  viewer: ({ caller }) => viewer(caller),
  serverInfo: () => serverInfo(),
  createRunFiles: ({ runs, v, caller, origin }) => runs.createFiles(v, caller, origin),
  markRunFilesUploaded: ({ runs, v, caller }) => runs.markFilesUploaded(v, caller),
  // The input as one object (`$input`) or as flat variables.
  createArtifact: ({ artifacts, v, caller }) =>
    artifacts.create(isRecord(v.input) ? v.input : v, caller),
  createArtifactManifest: ({ artifacts, v, caller, origin }) =>
    artifacts.createManifest(v, caller, origin),
  createArtifactFiles: ({ artifacts, v, caller, origin }) =>
    artifacts.createFiles(v, caller, origin),
  commitArtifact: ({ artifacts, v, caller }) => artifacts.commit(v, caller),
  artifact: ({ artifacts, v, caller }) => artifacts.byId(v, caller),
  // `project { run }` reads a run; `project { artifact }` an artifact's type.
  project: ({ runs, artifacts, v, caller, field }) =>
    field.inner.includes("run") ? runs.query(v, caller) : artifacts.type(v, caller),
};

/** A route: its method, and the path's parts its handler needs (undefined: not this route). */
interface Route {
  method: string;
  match: (pathname: string) => string[] | undefined;
  serve: (req: IncomingMessage, res: ServerResponse, url: URL, parts: string[]) => Promise<void>;
}

const FILE_STREAM = /^\/files\/([^/]+)\/([^/]+)\/([^/]+)\/file_stream$/;

/** W&B's artifact API in the emulator, and the reader of its artifacts for SFT jobs. */
export class WandbArtifactApi {
  readonly #uploads: UploadUrls;
  readonly #runs: WandbRuns;
  readonly #artifacts: WandbArtifacts;
  private readonly keys: Map<string, string> | undefined;
  readonly #options: Required<Omit<WandbApiOptions, "keys">>;
  /** Method and path to handler; no two routes take the same request. */
  readonly #routes: Route[] = [
    {
      method: "POST",
      match: (p) => (p === "/graphql" ? [] : undefined),
      serve: (req, res) => this.#json(req, res, (r, caller) => this.#graphql(r, caller, req, res)),
    },
    {
      method: "POST",
      match: (p) => FILE_STREAM.exec(p)?.slice(1),
      serve: (req, res, _url, scope) =>
        this.#json(req, res, (r, caller) => this.#runs.fileStream(scope, r, caller, res)),
    },
    {
      method: "PUT",
      match: (p) => (p.startsWith(UPLOAD_PREFIX) ? [] : undefined),
      serve: (req, res, url) => this.#receive(url, req, res),
    },
  ];

  constructor(options: WandbApiOptions) {
    this.keys = options.keys;
    this.#options = {
      maxUploadBytes: options.maxUploadBytes,
      maxRequestBytes: options.maxRequestBytes ?? 1024 * 1024,
      uploadUrlTtlMs: options.uploadUrlTtlMs ?? 60 * 60 * 1000,
    };
    this.#uploads = new UploadUrls(this.#options.uploadUrlTtlMs);
    this.#runs = new WandbRuns(this.#uploads);
    this.#artifacts = new WandbArtifacts(this.#uploads);
  }

  /** Whether this request is for W&B's API rather than the Training Service's. */
  handles(method: string, pathname: string): boolean {
    return this.#route(method, pathname) !== undefined;
  }

  async serve(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const found = this.#route(req.method ?? "", url.pathname);
    if (!found) return send(res, 404, { errors: [{ message: `No W&B route ${url.pathname}.` }] });
    return found.route.serve(req, res, url, found.parts);
  }

  /**
   * The text of the file an SFT job's `wandb-artifact:///` URL names, or an
   * error message saying why there is none.
   */
  read(artifactUrl: string, entity: string | undefined): { text: string } | { error: string } {
    return this.#artifacts.read(artifactUrl, entity);
  }

  /** The key first (nothing of an unauthenticated body is read), then the JSON body. */
  async #json(
    req: IncomingMessage,
    res: ServerResponse,
    handle: (request: unknown, caller: Caller) => void,
  ): Promise<void> {
    const caller = callerOf(req, this.keys);
    if (!caller) {
      return send(
        res,
        401,
        { errors: [{ message: "Missing or unknown API key: send HTTP Basic auth api:<key>." }] },
        true,
      );
    }
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
    handle(request, caller);
  }

  /** `POST /graphql`: `{ query, variables }`, answered by the operation its root field names. */
  #graphql(request: unknown, caller: Caller, req: IncomingMessage, res: ServerResponse) {
    if (!isRecord(request)) {
      return send(res, 400, {
        errors: [{ message: "The request body must be a JSON object { query, variables }." }],
      });
    }
    if (request.variables != null && !isRecord(request.variables)) {
      return send(res, 400, { errors: [{ message: "variables must be a JSON object." }] });
    }
    const origin = `http://${req.headers.host ?? "127.0.0.1"}`;
    const query = typeof request.query === "string" ? request.query : "";
    const v = (request.variables ?? {}) as Vars;
    try {
      const field = rootFields(query).find((f) => Object.hasOwn(OPERATIONS, f.name));
      if (!field) throw new GraphqlError(UNSERVED);
      const surfaces = { runs: this.#runs, artifacts: this.#artifacts };
      const data = OPERATIONS[field.name]?.({ ...surfaces, v, caller, origin, field });
      return send(res, 200, { data });
    } catch (error) {
      if (!(error instanceof GraphqlError)) throw error;
      return send(res, 200, { errors: [{ message: error.message }], data: null });
    }
  }

  /** `PUT /wandb-uploads/<token>`: the bytes of a file an upload URL was handed out for. */
  async #receive(url: URL, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const upload = this.#uploads.pending(url);
    const artifact = upload && this.#artifacts.get(upload.artifactId);
    const run = upload?.run === undefined ? undefined : this.#runs.get(upload.run);
    // Everything is checked before a byte of the body is read.
    if (!upload || !(artifact || run))
      return storageError(res, 404, "NoSuchUpload", "Unknown upload URL.");
    if (!this.#uploads.verify(url, req, res)) return;
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
    this.#uploads.done(url);
    res.writeHead(200).end();
  }

  #route(method: string, pathname: string): { route: Route; parts: string[] } | undefined {
    for (const route of this.#routes) {
      if (route.method !== method) continue;
      const parts = route.match(pathname);
      if (parts) return { route, parts };
    }
    return undefined;
  }
}

const UNSERVED =
  "The emulator serves only the run and artifact operations of W&B's API that the wandb client needs to log an artifact: UpsertBucket, RunResumeStatus, Viewer, ServerFeaturesQuery, CreateRunFiles, MarkRunFilesUploaded, ArtifactType, CreateArtifact, CreateArtifactManifest, CreateArtifactFiles, CommitArtifact, ArtifactByID, and a run query.";
