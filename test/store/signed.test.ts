import { describe, expect, it } from "vitest";
import {
  checkFeedbackAllowed,
  FeedbackNotAllowedError,
  FeedbackTokenError,
  signFeedbackToken,
  verifyFeedbackToken,
} from "../../src/store/index.js";

const secret = "a-secret-of-32-bytes-for-testing";
const hour = 3_600_000;

const refusal = (fn: () => unknown) => {
  try {
    fn();
  } catch (e) {
    return e as FeedbackTokenError;
  }
  throw new Error("accepted");
};

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
/** The character whose value differs from c's only in its two low bits. */
const sibling = (c: string) => ALPHABET[ALPHABET.indexOf(c) ^ 1] as string;

describe("signed feedback tokens", () => {
  it("grants feedback on one trajectory with the fields it names, until it expires", () => {
    const now = Date.now();
    const token = signFeedbackToken({ trajectoryId: "t1", expiresAt: now + hour, secret });
    expect(token).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(verifyFeedbackToken(token, secret, now)).toEqual({
      trajectoryId: "t1",
      fields: ["reward", "comment"],
      expiresAt: now + hour,
    });
    const expired = refusal(() => verifyFeedbackToken(token, secret, now + hour));
    expect(FeedbackTokenError.isInstance(expired)).toBe(true);
    expect(expired).toMatchObject({ problem: "expired", status: 403 });
  });

  it("refuses a token altered anywhere or signed with another secret, never echoing the secret", () => {
    const token = signFeedbackToken({
      trajectoryId: "t1",
      expiresAt: Date.now() + hour,
      secret: Buffer.from(secret),
    });
    const [payload, signature] = token.split(".") as [string, string];
    const forged = Buffer.from(
      JSON.stringify({ t: "t2", f: ["reward"], e: Date.now() + hour }),
    ).toString("base64url");
    for (const bad of [
      `${forged}.${signature}`,
      `${payload}.${signature.slice(0, -2)}AA`,
      `${payload}.${signature.slice(1)}`,
      // Same decoded bytes, another spelling: the unused low bits of the last character.
      `${payload}.${signature.slice(0, -1)}${sibling(signature.at(-1) as string)}`,
    ]) {
      const e = refusal(() => verifyFeedbackToken(bad, secret));
      expect(e.problem).toBe("tampered");
      expect(e.message).not.toContain(secret);
    }
    expect(
      refusal(() => verifyFeedbackToken(token, "another-secret-of-32-bytes-long!")).problem,
    ).toBe("tampered");
    for (const bad of ["", "abc", "a.b.c", `${payload}.`, `${payload}.!!`])
      expect(refusal(() => verifyFeedbackToken(bad, secret)).problem).toBe("malformed");
  });

  it("refuses a short secret without showing it", () => {
    expect(() => signFeedbackToken({ trajectoryId: "t", expiresAt: 1, secret: "short" })).toThrow(
      /secret: expected at least 16 bytes, received 5/,
    );
  });

  it("checks that a body uses only the allowed fields, for the signed trajectory", () => {
    const grant = { trajectoryId: "t1", fields: ["reward" as const], expiresAt: Date.now() + hour };
    checkFeedbackAllowed({ trajectory_id: "t1", reward: 1, idempotency_key: "k" }, grant);
    expect(() => checkFeedbackAllowed({ trajectory_id: "t1", comment: "x" }, grant)).toThrow(
      expect.objectContaining({ field: "comment" }),
    );
    const other = (() => {
      try {
        checkFeedbackAllowed({ trajectory_id: "t2", reward: 1 }, grant);
      } catch (e) {
        return e;
      }
    })();
    expect(FeedbackNotAllowedError.isInstance(other)).toBe(true);
    expect(other).toMatchObject({ field: "trajectory_id", status: 403 });
  });
});
