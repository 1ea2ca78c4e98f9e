// The part of W&B's GraphQL API that saving a dataset artifact takes, with the
// operations written as the `wandb` client's own core writes them
// (wandb/wandb core/api/graphql/*.graphql): the same operation names, fields
// and variables, so a server that serves the client serves us.
import { abortableSleep, isRetryableStatus, retryDelay, USER_AGENT } from "../client/index.js";

/** W&B's public API, used when neither option nor `WANDB_BASE_URL` gives one. */
export const DEFAULT_WANDB_BASE_URL = "https://api.wandb.ai";

/**
 * A W&B API call failed: the operation, and the HTTP status or GraphQL error
 * the server gave. Never carries the API key.
 *
 * @example
 * try { await uploader.upload(artifact); } catch (e) { if (e instanceof WandbApiError) console.error(e.operation, e.status); }
 */
export class WandbApiError extends Error {
  override name = "WandbApiError";
  constructor(
    /** The GraphQL operation (`CreateArtifact`, ...) or `upload <file>`. */
    readonly operation: string,
    message: string,
    /** The HTTP status, when the server answered one. */
    readonly status?: number,
  ) {
    super(message);
  }
}

export const UPSERT_RUN = `mutation UpsertBucket($name: String, $project: String, $entity: String) {
  upsertBucket(input: { name: $name, modelName: $project, entityName: $entity }) {
    bucket { id name }
    inserted
  }
}`;

export const CREATE_ARTIFACT = `mutation CreateArtifact($input: CreateArtifactInput!) {
  createArtifact(input: $input) {
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

export const CREATE_ARTIFACT_FILES = `mutation CreateArtifactFiles(
  $artifactFiles: [CreateArtifactFileSpecInput!]!, $storageLayout: ArtifactStorageLayout!
) {
  createArtifactFiles(input: { artifactFiles: $artifactFiles, storageLayout: $storageLayout }) {
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

/** How to reach W&B: base URL, key, fetch, attempts. */
export interface WandbConnection {
  baseUrl: string;
  apiKey: string;
  fetch: typeof fetch;
  maxAttempts: number;
  signal?: AbortSignal | undefined;
}

/** Sends one GraphQL operation (HTTP Basic `api:<key>`, as the `wandb` client does). */
export async function graphql<T>(
  conn: WandbConnection,
  operation: string,
  query: string,
  variables: Record<string, unknown>,
): Promise<T> {
  const url = `${conn.baseUrl.replace(/\/+$/, "")}/graphql`;
  const response = await withRetries(conn, operation, () =>
    conn.fetch(url, {
      method: "POST",
      headers: {
        authorization: `Basic ${Buffer.from(`api:${conn.apiKey}`).toString("base64")}`,
        "content-type": "application/json",
        accept: "application/json",
        "user-agent": USER_AGENT,
      },
      body: JSON.stringify({ operationName: operation, query, variables }),
      signal: conn.signal,
    }),
  );
  const body = (await response.json().catch(() => undefined)) as
    | { data?: T; errors?: { message?: string }[] }
    | undefined;
  if (body?.errors?.length) {
    const messages = body.errors.map((e) => e.message ?? "unknown error").join("; ");
    throw new WandbApiError(operation, `W&B ${operation} failed: ${redact(messages, conn)}.`);
  }
  if (!body?.data) {
    throw new WandbApiError(operation, `W&B ${operation} answered without data.`);
  }
  return body.data;
}

/** PUTs a file to an upload URL the server gave, with the headers it asked for. */
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
    if (at > 0) sent[header.slice(0, at).trim()] = header.slice(at + 1).trim();
  }
  await withRetries(conn, `upload ${file}`, () =>
    conn.fetch(uploadUrl, {
      method: "PUT",
      headers: sent,
      body: typeof data === "string" ? data : new Blob([data as Uint8Array<ArrayBuffer>]),
      signal: conn.signal,
    }),
  );
}

async function withRetries(
  conn: WandbConnection,
  operation: string,
  send: () => Promise<Response>,
): Promise<Response> {
  for (let attempt = 0; ; attempt++) {
    let failure: string;
    let status: number | undefined;
    let headers: Headers | undefined;
    try {
      const response = await send();
      if (response.ok) return response;
      status = response.status;
      headers = response.headers;
      const text = await response.text().catch(() => "");
      failure = `answered HTTP ${status}${text ? `: ${redact(text.slice(0, 300), conn)}` : ""}`;
      if (!isRetryableStatus(status)) attempt = conn.maxAttempts;
    } catch (error) {
      if (conn.signal?.aborted) throw error;
      failure = `failed: ${(error as Error).message}`;
    }
    if (attempt + 1 >= conn.maxAttempts) {
      throw new WandbApiError(operation, `W&B ${operation} ${failure}.`, status);
    }
    await abortableSleep(retryDelay(attempt, { headers, initialDelayMs: 200 }), conn.signal);
  }
}

// Too short a key would blank out ordinary words; such a key is no secret anyway.
function redact(text: string, conn: WandbConnection): string {
  return conn.apiKey.length >= 8 ? text.split(conn.apiKey).join("[redacted]") : text;
}
