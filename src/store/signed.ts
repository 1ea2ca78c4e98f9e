// Signed feedback tokens: what a browser page holds to send feedback for one
// trajectory without any key. Pure functions; the secret stays with the caller.
import { createHmac, timingSafeEqual } from "node:crypto";
import { InvalidArgumentError } from "../util/index.js";
import { FeedbackNotAllowedError, FeedbackTokenError } from "./errors.js";
import { FEEDBACK_FIELDS, type FeedbackField, type FeedbackInput } from "./feedback.js";

/** The fields a token allows when none are named. */
export const DEFAULT_TOKEN_FIELDS: readonly FeedbackField[] = ["reward", "comment"];

/** What a verified token grants: feedback on one trajectory, with these fields, until then. */
export type FeedbackGrant = {
  trajectoryId: string;
  fields: FeedbackField[];
  /** When the token stops working, in ms since the epoch. */
  expiresAt: number;
};

const B64URL = /^[A-Za-z0-9_-]+$/;

function checkSecret(call: string, secret: unknown): Buffer {
  const bytes =
    typeof secret === "string" ? Buffer.from(secret) : Buffer.isBuffer(secret) ? secret : null;
  // The secret's value is never echoed, only its kind or length.
  if (bytes === null)
    throw new InvalidArgumentError(call, "secret", "a string or a Buffer", secret);
  if (bytes.length < 16)
    throw new InvalidArgumentError(
      call,
      "secret",
      "at least 16 bytes",
      secret,
      `expected at least 16 bytes, received ${bytes.length}`,
    );
  return bytes;
}

const mac = (secret: Buffer, payload: string) =>
  createHmac("sha256", secret).update(payload).digest();

/**
 * A URL-safe token that lets its holder send feedback for one trajectory,
 * with the fields it names, until `expiresAt`: its payload in base64url, a
 * dot, and an HMAC-SHA256 of the payload under `secret` (at least 16 bytes).
 *
 * @example
 * const token = signFeedbackToken({ trajectoryId: id, expiresAt: Date.now() + 86_400_000, secret });
 * const url = `https://chat.example.com/feedback?token=${token}`;
 */
export function signFeedbackToken(options: {
  trajectoryId: string;
  /** The fields the holder may send; default `["reward", "comment"]`. */
  fields?: readonly FeedbackField[];
  /** When the token stops working, in ms since the epoch. */
  expiresAt: number;
  secret: string | Buffer;
}): string {
  const call = "signFeedbackToken";
  const key = checkSecret(call, options.secret);
  if (typeof options.trajectoryId !== "string" || options.trajectoryId === "")
    throw new InvalidArgumentError(
      call,
      "trajectoryId",
      "a non-empty string",
      options.trajectoryId,
    );
  if (!Number.isFinite(options.expiresAt))
    throw new InvalidArgumentError(
      call,
      "expiresAt",
      "a time in ms since the epoch",
      options.expiresAt,
    );
  const fields = [...(options.fields ?? DEFAULT_TOKEN_FIELDS)];
  fields.forEach((f, i) => {
    if (!FEEDBACK_FIELDS.includes(f))
      throw new InvalidArgumentError(
        call,
        `fields[${i}]`,
        `one of ${FEEDBACK_FIELDS.join(", ")}`,
        f,
      );
  });
  const payload = Buffer.from(
    JSON.stringify({ t: options.trajectoryId, f: fields, e: options.expiresAt }),
  ).toString("base64url");
  return `${payload}.${mac(key, payload).toString("base64url")}`;
}

/**
 * Checks a token made by {@link signFeedbackToken} and returns what it
 * grants. Throws `FeedbackTokenError` with `problem` `"malformed"`,
 * `"tampered"` (the signature does not match, compared in constant time) or
 * `"expired"` (at `now`, default `Date.now()`).
 *
 * @example
 * const grant = verifyFeedbackToken(token, secret);
 * checkFeedbackAllowed(input, grant);
 */
export function verifyFeedbackToken(
  token: string,
  secret: string | Buffer,
  now: number = Date.now(),
): FeedbackGrant {
  const key = checkSecret("verifyFeedbackToken", secret);
  const parts = typeof token === "string" ? token.split(".") : [];
  const [payload, signature] = parts;
  if (
    parts.length !== 2 ||
    !payload ||
    !signature ||
    !B64URL.test(payload) ||
    !B64URL.test(signature)
  )
    throw new FeedbackTokenError(
      "malformed",
      "expected a payload and a signature in base64url, joined by a dot",
    );
  // Compared as text, not as decoded bytes: the last base64url character of a
  // 32-byte MAC carries two unused bits, so decoding would accept four
  // spellings of one signature. Only the canonical one passes.
  const expected = Buffer.from(mac(key, payload).toString("base64url"));
  const given = Buffer.from(signature);
  if (given.length !== expected.length || !timingSafeEqual(given, expected))
    throw new FeedbackTokenError("tampered", "its signature does not match its content");
  const grant = readPayload(payload);
  if (now >= grant.expiresAt)
    throw new FeedbackTokenError(
      "expired",
      `it expired at ${new Date(grant.expiresAt).toISOString()}; ask for a new link`,
    );
  return grant;
}

function readPayload(payload: string): FeedbackGrant {
  let data: unknown;
  try {
    data = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
  } catch {
    data = undefined;
  }
  const d = data as { t?: unknown; f?: unknown; e?: unknown } | undefined;
  if (
    typeof d?.t !== "string" ||
    typeof d.e !== "number" ||
    !Array.isArray(d.f) ||
    !d.f.every((f) => FEEDBACK_FIELDS.includes(f))
  )
    // Signed by our secret yet unreadable: made by another version or by hand.
    throw new FeedbackTokenError("malformed", "its signed content is not a feedback grant");
  return { trajectoryId: d.t, fields: d.f, expiresAt: d.e };
}

/**
 * Throws `FeedbackNotAllowedError` when `input` names another trajectory
 * than `grant`, or uses a content field the grant does not allow.
 * `trajectory_id` and `idempotency_key` are always allowed.
 *
 * @example
 * checkFeedbackAllowed({ trajectory_id: id, metrics: { x: 1 } }, grant); // throws: field metrics
 */
export function checkFeedbackAllowed(input: FeedbackInput, grant: FeedbackGrant): void {
  if (input.trajectory_id !== grant.trajectoryId)
    throw new FeedbackNotAllowedError(
      "trajectory_id",
      "the token was signed for another trajectory",
    );
  for (const field of FEEDBACK_FIELDS)
    if (input[field] !== undefined && !grant.fields.includes(field))
      throw new FeedbackNotAllowedError(
        field,
        `the token allows ${grant.fields.join(", ") || "no fields"}`,
      );
}
