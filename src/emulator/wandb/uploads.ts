// The upload URLs both surfaces hand out (artifact files, manifests, run
// files), signed and checked as GCS V2 signed URLs are: the signature covers
// the method, Content-MD5, Content-Type and the expiry; a mismatch is 403.
import { createHmac, randomBytes, randomUUID, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { headerValue, storageError } from "./http.js";

/** Where an upload's bytes go. */
export interface Upload {
  artifactId: string;
  /** A file of the artifact, or null for its manifest. */
  file: string | null;
  /** For a run file (`CreateRunFiles`): the run's `entity/project/name`; artifactId is then "". */
  run?: string;
}

export const UPLOAD_PREFIX = "/wandb-uploads/";

/** The uploads handed out and not yet received. */
export class UploadUrls {
  readonly #uploads = new Map<string, Upload>();
  // The key upload URLs are signed with; it never leaves the process.
  readonly #secret = randomBytes(32);

  constructor(private readonly ttlMs: number) {}

  /** A signed URL for `upload`, whose PUT must carry Content-MD5 `md5` (or none when ""). */
  url(origin: string, upload: Upload, md5: string): string {
    const token = randomUUID();
    this.#uploads.set(token, upload);
    const path = `${UPLOAD_PREFIX}${token}`;
    const expires = Math.floor((Date.now() + this.ttlMs) / 1000);
    const signature = this.#sign(stringToSign("PUT", md5, "", expires, path));
    const query = new URLSearchParams({
      GoogleAccessId: "emulator@trajectory-recorder.local",
      Expires: String(expires),
      Signature: signature,
    });
    return `${origin}${path}?${query}`;
  }

  /** The upload a URL was handed out for, if it still waits for its bytes. */
  pending(url: URL): Upload | undefined {
    return this.#uploads.get(url.pathname.slice(UPLOAD_PREFIX.length));
  }

  /** Whether the request is signed as its URL was and in time; if not, the error is answered. */
  verify(url: URL, req: IncomingMessage, res: ServerResponse): boolean {
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
      storageError(
        res,
        403,
        "SignatureDoesNotMatch",
        "The request signature we calculated does not match the signature you provided. Send exactly the headers the upload URL was given with (uploadHeaders), and no Content-Type unless they name one.",
        text,
      );
      return false;
    }
    if (!Number.isFinite(expires) || Date.now() / 1000 > expires) {
      storageError(res, 400, "ExpiredToken", "The upload URL has expired; ask for a new one.");
      return false;
    }
    return true;
  }

  /** The upload is received: its URL no longer takes bytes. */
  done(url: URL): void {
    this.#uploads.delete(url.pathname.slice(UPLOAD_PREFIX.length));
  }

  #sign(text: string): string {
    return createHmac("sha256", this.#secret).update(text).digest("base64");
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
