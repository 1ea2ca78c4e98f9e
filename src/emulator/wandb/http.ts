// The HTTP pieces the W&B surfaces answer with: JSON and storage (XML)
// errors, capped body reads, and the small value checks their handlers share.
import type { IncomingMessage, ServerResponse } from "node:http";
import { readRequestBody } from "../../util/http.js";
import { GraphqlError } from "./graphql.js";

export function send(res: ServerResponse, status: number, body: unknown, close = false): void {
  res.writeHead(status, {
    "content-type": "application/json",
    ...(close ? { connection: "close" } : {}),
  });
  res.end(JSON.stringify(body));
}

export function tooLarge(res: ServerResponse, maxBytes: number): void {
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

/** An error of the storage the upload URLs point at, in its XML form. */
export function storageError(
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

export function headerValue(req: IncomingMessage, name: string): string {
  const value = req.headers[name];
  return (Array.isArray(value) ? value.join(",") : (value ?? "")).trim();
}

/** The body, or undefined once it passes `maxBytes` (nothing further is read): the shared reader. */
export const readCapped = readRequestBody;

export function isRecord(value: unknown): value is Record<string, any> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function parseJsonString(value: string, what: string): unknown {
  try {
    return JSON.parse(value);
  } catch {
    throw new GraphqlError(`${what} must be a JSON string.`);
  }
}

export function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** W&B's global ids are base64 of `Type:key`. */
export function projectId(entity: string, project: string): string {
  return Buffer.from(`Project:${entity}/${project}`).toString("base64");
}
export function entityId(entity: string): string {
  return Buffer.from(`Entity:${entity}`).toString("base64");
}

/** W&B's timestamps: ISO 8601 to the second, without a zone letter. */
export const wandbNow = () => new Date().toISOString().replace(/\.\d+Z$/, "");
