// The part of W&B's API that saving a dataset artifact takes, with the
// GraphQL operations written as the `wandb` client's own core writes them
// (wandb/wandb core/api/graphql/*.graphql): the same operation names, fields
// and variables, so a server that serves the client serves us.
import { z } from "zod";
import { abortableSleep, isRetryableStatus, retryDelay, USER_AGENT } from "../../client/index.js";
import { markError, TrajectoryRecorderError } from "../../util/error-family.js";
import { formatZodPath } from "../../wire/index.js";
import { exchange, redactKey, type WandbTimeouts, WandbTransportError } from "./http.js";

/** W&B's public API, used when neither option nor `WANDB_BASE_URL` gives one. */
export const DEFAULT_WANDB_BASE_URL = "https://api.wandb.ai";

/**
 * A W&B API call failed: the operation, and the HTTP status or GraphQL error
 * the server gave. Never carries the API key, in any form.
 *
 * @example
 * try { await uploader.upload(artifact); } catch (e) { if (e instanceof WandbApiError) console.error(e.operation, e.status); }
 */
export class WandbApiError extends TrajectoryRecorderError {
  static {
    markError(WandbApiError, "WandbApiError");
  }
  /** The class's name, `"WandbApiError"` (what `error.name` reads). */
  override name = "WandbApiError";
  constructor(
    /** The GraphQL operation (`CreateArtifact`, ...), `upload <file>` or `finish run`. */
    readonly operation: string,
    message: string,
    /** The HTTP status, when the server answered one. */
    readonly status?: number,
  ) {
    super(message);
  }
}

// The run the artifact is logged from, upserted as `wandb.init(resume="allow")` does.
export const UPSERT_RUN = `mutation UpsertBucket(
  $id: String, $name: String, $project: String, $entity: String, $groupName: String,
  $description: String, $displayName: String, $notes: String, $commit: String,
  $config: JSONString, $host: String, $debug: Boolean, $program: String, $repo: String,
  $jobType: String, $state: String, $sweep: String, $tags: [String!], $summaryMetrics: JSONString
) {
  upsertBucket(input: {
    id: $id, name: $name, groupName: $groupName, modelName: $project, entityName: $entity,
    description: $description, displayName: $displayName, notes: $notes, config: $config,
    commit: $commit, host: $host, debug: $debug, jobProgram: $program, jobRepo: $repo,
    jobType: $jobType, state: $state, sweep: $sweep, tags: $tags, summaryMetrics: $summaryMetrics
  }) {
    bucket { id name displayName project { id name entity { id name } } }
    inserted
  }
}`;

// What the client asks before logging an artifact: the type its name already has.
export const ARTIFACT_TYPE = `query ArtifactType($entityName: String, $projectName: String, $name: String!) {
  project(name: $projectName, entityName: $entityName) {
    artifact(name: $name) { artifactType { name } }
  }
}`;

export const CREATE_ARTIFACT = `mutation CreateArtifact(
  $entityName: String!, $projectName: String!, $artifactTypeName: String!,
  $artifactCollectionName: String!, $runName: String, $digest: String!,
  $description: String, $aliases: [ArtifactAliasInput!], $metadata: JSONString,
  $clientID: ID!, $sequenceClientID: ID!
) {
  createArtifact(input: {
    entityName: $entityName, projectName: $projectName, artifactTypeName: $artifactTypeName,
    artifactCollectionName: $artifactCollectionName, runName: $runName, digest: $digest,
    digestAlgorithm: MANIFEST_MD5, description: $description, aliases: $aliases,
    metadata: $metadata, enableDigestDeduplication: true,
    clientID: $clientID, sequenceClientID: $sequenceClientID
  }) {
    artifact { id state artifactSequence { latestArtifact { id } } }
  }
}`;

export const CREATE_ARTIFACT_MANIFEST = `mutation CreateArtifactManifest(
  $artifactID: ID!, $baseArtifactID: ID, $name: String!, $digest: String!,
  $entityName: String!, $projectName: String!, $runName: String!,
  $manifestType: ArtifactManifestType!, $includeUpload: Boolean!
) {
  createArtifactManifest(input: {
    artifactID: $artifactID, baseArtifactID: $baseArtifactID, name: $name, digest: $digest,
    entityName: $entityName, projectName: $projectName, runName: $runName, type: $manifestType
  }) {
    artifactManifest {
      id
      file { id uploadUrl @include(if: $includeUpload) uploadHeaders @include(if: $includeUpload) }
    }
  }
}`;

export const CREATE_ARTIFACT_FILES = `mutation CreateArtifactFiles($input: CreateArtifactFilesInput!) {
  createArtifactFiles(input: $input) {
    files { edges { node { storagePath uploadUrl uploadHeaders artifact { id } } } }
  }
}`;

export const COMMIT_ARTIFACT = `mutation CommitArtifact($artifactID: ID!) {
  commitArtifact(input: { artifactID: $artifactID }) {
    artifact { id digest }
  }
}`;

// What the client's `artifact.wait()` reads once the artifact is committed.
export const ARTIFACT_VERSION = `query ArtifactByID($id: ID!) {
  artifact(id: $id) { id versionIndex }
}`;

/** How to reach W&B: base URL, key, transport, attempts, deadlines. */
export interface WandbConnection {
  baseUrl: string;
  apiKey: string;
  /** A custom fetch; undefined uses the built-in transport (with its own connect deadline). */
  fetch: typeof fetch | undefined;
  maxAttempts: number;
  timeouts: Required<WandbTimeouts>;
  maxAnswerBytes: number;
  signal?: AbortSignal | undefined;
}

function authorization(conn: WandbConnection): string {
  return `Basic ${Buffer.from(`api:${conn.apiKey}`).toString("base64")}`;
}

const GraphqlAnswerSchema = z.looseObject({
  data: z.unknown().optional(),
  errors: z.array(z.looseObject({ message: z.unknown().optional() })).nullish(),
});

/**
 * Sends one GraphQL operation (HTTP Basic `api:<key>`, as the `wandb` client
 * does) and checks the answer's `data` against `schema`.
 */
export async function graphql<S extends z.ZodType>(
  conn: WandbConnection,
  operation: string,
  query: string,
  variables: Record<string, unknown>,
  schema: S,
): Promise<z.infer<S>> {
  const url = `${conn.baseUrl.replace(/\/+$/, "")}/graphql`;
  const answer = await withRetries(conn, operation, url, {
    method: "POST",
    headers: {
      authorization: authorization(conn),
      "content-type": "application/json",
      accept: "application/json",
      "user-agent": USER_AGENT,
    },
    body: Buffer.from(JSON.stringify({ operationName: operation, query, variables })),
  });
  let json: unknown;
  try {
    json = JSON.parse(answer.toString("utf8"));
  } catch {
    throw new WandbApiError(operation, `W&B ${operation} answered something other than JSON.`);
  }
  const body = GraphqlAnswerSchema.safeParse(json);
  if (!body.success)
    throw new WandbApiError(
      operation,
      `W&B ${operation} answered JSON that is not a GraphQL answer.`,
    );
  if (body.data.errors?.length) {
    const messages = body.data.errors
      .map((e) => (typeof e.message === "string" ? e.message : "unknown error"))
      .join("; ")
      .slice(0, 1000);
    throw new WandbApiError(
      operation,
      `W&B ${operation} failed: ${redactKey(messages, conn.apiKey)}.`,
    );
  }
  if (body.data.data === undefined || body.data.data === null) {
    throw new WandbApiError(operation, `W&B ${operation} answered without data.`);
  }
  const data = schema.safeParse(body.data.data);
  if (!data.success) {
    const issue = data.error.issues[0];
    const where = formatZodPath(["data", ...(issue?.path ?? [])]);
    throw new WandbApiError(
      operation,
      `W&B ${operation} answered an unexpected shape: ${where}: ${issue?.message ?? "invalid"}.`,
    );
  }
  return data.data;
}

/**
 * PUTs a file to an upload URL the server gave, with exactly the headers it
 * listed and no others: no Content-Type unless the list names one. W&B's
 * upload URLs are signed URLs whose signature covers Content-Type and
 * Content-MD5; a header the URL was not signed with is answered 403.
 */
export async function putFile(
  conn: WandbConnection,
  file: string,
  uploadUrl: string,
  headers: readonly string[] | null | undefined,
  data: string | Uint8Array,
): Promise<void> {
  const sent: Record<string, string> = {};
  // The server lists headers as "Name:value" strings.
  for (const header of headers ?? []) {
    const at = header.indexOf(":");
    if (at > 0) sent[header.slice(0, at).trim().toLowerCase()] = header.slice(at + 1).trim();
  }
  const body = typeof data === "string" ? Buffer.from(data) : data;
  await withRetries(conn, `upload ${file}`, uploadUrl, { method: "PUT", headers: sent, body });
}

/**
 * Marks the run finished, as the client does when `run.finish()` ends its
 * file stream: `{"complete": true, "exitcode": 0}` to the run's file_stream.
 */
export async function finishRun(
  conn: WandbConnection,
  scope: { entity: string; project: string; run: string },
): Promise<void> {
  const path = [scope.entity, scope.project, scope.run].map(encodeURIComponent).join("/");
  await withRetries(conn, "finish run", `${conn.baseUrl}/files/${path}/file_stream`, {
    method: "POST",
    headers: {
      authorization: authorization(conn),
      "content-type": "application/json",
      "user-agent": USER_AGENT,
    },
    body: Buffer.from(JSON.stringify({ complete: true, exitcode: 0 })),
  });
}

async function withRetries(
  conn: WandbConnection,
  operation: string,
  url: string,
  init: { method: string; headers: Record<string, string>; body: Uint8Array },
): Promise<Buffer> {
  const ex = {
    fetch: conn.fetch,
    timeouts: conn.timeouts,
    maxAnswerBytes: conn.maxAnswerBytes,
    signal: conn.signal,
  };
  for (let attempt = 0; ; attempt++) {
    let failure: string;
    let status: number | undefined;
    let headers: Headers | undefined;
    try {
      const answer = await exchange(ex, url, init);
      if (answer.status >= 200 && answer.status < 300) return answer.body;
      status = answer.status;
      headers = answer.headers;
      const text = answer.body.toString("utf8", 0, Math.min(answer.body.length, 300));
      failure = `answered HTTP ${status}${text ? `: ${redactKey(text, conn.apiKey)}` : ""}`;
      if (!isRetryableStatus(status)) attempt = conn.maxAttempts;
    } catch (error) {
      if (conn.signal?.aborted) throw conn.signal.reason;
      const message = redactKey(describe(error), conn.apiKey);
      failure = error instanceof WandbTransportError ? message : `failed: ${message}`;
      if (error instanceof WandbTransportError && !error.retryable) attempt = conn.maxAttempts;
    }
    if (attempt + 1 >= conn.maxAttempts) {
      throw new WandbApiError(operation, `W&B ${operation} ${failure}.`, status);
    }
    await abortableSleep(retryDelay(attempt, { headers, initialDelayMs: 200 }), conn.signal);
  }
}

// fetch's own "fetch failed" hides the reason in `cause`.
function describe(error: unknown): string {
  const e = error as { message?: unknown; cause?: { message?: unknown; code?: unknown } };
  const message = typeof e?.message === "string" ? e.message : String(error);
  const cause = e?.cause;
  const detail =
    typeof cause?.code === "string"
      ? cause.code
      : typeof cause?.message === "string"
        ? cause.message
        : "";
  return detail && !message.includes(detail) ? `${message} (${detail})` : message;
}
