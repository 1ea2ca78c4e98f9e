import { describe, expect, it } from "vitest";
import { CompactLogprobs, scanAnswer } from "../../src/logprobs/index.js";

// The scan must read exactly what JSON.parse reads: every answer below is
// scanned, and its logprobs compared with the compact form of the parsed
// objects (the path the recorder takes without the scan), as objects and as
// the wire bytes written from the columns.

let seed = 11;
const rand = () => {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed / 2147483648;
};

const TEXTS = [
  "token_id:0",
  "token_id:7",
  "token_id:151643",
  "token_id:2000000",
  "token_id:007",
  "hello",
  " world",
  'quo"te',
  "back\\slash",
  "tab\there",
  "é",
  "日本",
  "🙂",
  "\ud800",
  "",
  "line\nbreak",
];
const NUMBERS = [
  -0.5, -0, 0, -9999, -1.2345678901234567, -3.4e-7, -1e-300, -12.000000000000002,
  -0.30000000000000004, -2.5e21, -123456789012345.6, -5e-324,
];

function pickText(): string {
  return rand() < 0.5
    ? `token_id:${Math.floor(rand() * 200000)}`
    : (TEXTS[Math.floor(rand() * TEXTS.length)] as string);
}
function pickNumber(): number {
  return rand() < 0.5 ? -rand() * 20 : (NUMBERS[Math.floor(rand() * NUMBERS.length)] as number);
}
function bytesFor(text: string, odd: boolean): number[] | null {
  const b = [...Buffer.from(text)];
  if (!odd) return b;
  return rand() < 0.3 ? null : b.slice(1);
}
function token(withTop: boolean, odd: number) {
  const t = pickText();
  const out: Record<string, unknown> = {
    token: t,
    logprob: pickNumber(),
    bytes: bytesFor(t, rand() < odd),
  };
  if (withTop)
    out.top_logprobs = Array.from({ length: Math.floor(rand() * 4) }, () => token(false, odd));
  return out;
}
function answer(choices: number, tokens: number, odd: number) {
  return {
    id: "c",
    object: "chat.completion",
    created: 1,
    model: "m",
    choices: Array.from({ length: choices }, (_, i) => ({
      index: i,
      finish_reason: "stop",
      logprobs:
        rand() < 0.15
          ? null
          : {
              content: Array.from({ length: tokens }, () => token(true, odd)),
              refusal: rand() < 0.2 ? [token(true, odd)] : null,
            },
      message: { role: "assistant", content: 'with "logprobs": {"content":[]} inside' },
    })),
    usage: { prompt_tokens: 1, completion_tokens: tokens, total_tokens: tokens + 1 },
  };
}

/** What the recorder keeps without the scan: the compact form of the parsed objects. */
function viaObjects(text: string) {
  const parsed = JSON.parse(text) as { choices: { logprobs: unknown }[] };
  return parsed.choices.map((c) => (c.logprobs ? CompactLogprobs.from(c.logprobs) : undefined));
}

function same(text: string) {
  const scanned = scanAnswer(text, false);
  const expected = viaObjects(text);
  if (!expected.some((e) => e)) {
    expect(scanned).toBeUndefined();
    return;
  }
  expect(scanned).toBeDefined();
  expect(scanned?.logprobs.length).toBe(expected.length);
  expected.forEach((e, i) => {
    const got = scanned?.logprobs[i];
    expect(JSON.stringify(got)).toBe(JSON.stringify(e));
    expect(Buffer.from(got?.wireBytes() ?? []).toString()).toBe(
      Buffer.from(e?.wireBytes() ?? []).toString(),
    );
  });
}

describe("scanAnswer", () => {
  it("reads what JSON.parse reads, compact or pretty-printed, with any key order", () => {
    for (let round = 0; round < 200; round++) {
      const a = answer(1 + Math.floor(rand() * 3), Math.floor(rand() * 12), rand() < 0.5 ? 0 : 0.3);
      same(JSON.stringify(a));
      same(JSON.stringify(a, null, 2));
      // Keys in another order (bytes first, alternatives before the text).
      const reordered = JSON.stringify(a, (_k, v) =>
        v && typeof v === "object" && !Array.isArray(v) && "token" in v
          ? Object.fromEntries(Object.entries(v).reverse())
          : v,
      );
      same(reordered);
    }
  });

  it("reads each logprob as the double JSON.parse gives, digits on both sides of 2^53 included", () => {
    // Written as a server may write them: shortest round-trip doubles,
    // float32 values widened (17 digits), and literals whose digits make an
    // integer just below, at and above 2^53 (9007199254740992).
    const literals = [
      "-9007199254740991e-15",
      "-9007199254740992e-15",
      "-9007199254740993e-15",
      "-0.9007199254740991",
      "-0.9007199254740993",
      "-1.00000000000000011102230246251565",
      "-123.456e-3",
      "-4.9e-324",
      "-1e22",
      "-1e23",
    ];
    for (let round = 0; round < 2000; round++)
      literals.push(
        String(-rand() * 20),
        String(Math.fround(-rand() * 20)),
        String(-rand() * 10 ** -Math.floor(rand() * 12)),
      );
    const tokens = literals.map(
      (l) =>
        `{"token":"token_id:5","logprob":${l},"bytes":[116,111,107,101,110,95,105,100,58,53],"top_logprobs":[]}`,
    );
    const text = `{"choices":[{"index":0,"logprobs":{"content":[${tokens.join(",")}],"refusal":null}}]}`;
    const scanned = scanAnswer(text, false)?.logprobs[0]?.content;
    expect(scanned?.map((t) => t.logprob)).toEqual(literals.map((l) => JSON.parse(l)));
    for (let i = 0; i < literals.length; i++)
      expect(Object.is(scanned?.[i]?.logprob, JSON.parse(literals[i] as string))).toBe(true);
  });

  it("writes back the server's logprobs byte for byte (vLLM's token_id:N spelling)", () => {
    const content = Array.from({ length: 50 }, () => {
      const t = `token_id:${Math.floor(rand() * 150000)}`;
      return {
        token: t,
        logprob: -rand() * 10,
        bytes: [...Buffer.from(t)],
        top_logprobs: Array.from({ length: 5 }, () => {
          const u = `token_id:${Math.floor(rand() * 150000)}`;
          return { token: u, logprob: -rand() * 10, bytes: [...Buffer.from(u)] };
        }),
      };
    });
    const logprobs = { content, refusal: null };
    const text = JSON.stringify({ choices: [{ index: 0, logprobs, message: { content: "x" } }] });
    const scanned = scanAnswer(text, false);
    const wire = Buffer.from(scanned?.logprobs[0]?.wireBytes() ?? []).toString();
    // The key order the writer uses is the SDK's: token, bytes, logprob, top_logprobs.
    const reordered = JSON.stringify({
      content: content.map((t) => ({
        token: t.token,
        bytes: t.bytes,
        logprob: t.logprob,
        top_logprobs: t.top_logprobs.map((u) => ({
          token: u.token,
          bytes: u.bytes,
          logprob: u.logprob,
        })),
      })),
      refusal: null,
    });
    expect(wire).toBe(reordered);
  });

  it("tells apart the variants of one token_id:N (bytes split over tokens, or null) met again", () => {
    const t = "token_id:4242";
    const utf8 = [...Buffer.from(t)];
    const variants = [utf8, utf8.slice(1), null, utf8.slice(2), utf8.slice(1), null, utf8];
    const tokenOf = (bytes: number[] | null, i: number) => ({
      token: t,
      logprob: -i / 8,
      bytes,
      top_logprobs: variants.map((b, k) => ({ token: t, logprob: -k, bytes: b })),
    });
    const text = JSON.stringify({
      choices: [{ logprobs: { content: variants.map(tokenOf), refusal: null } }],
    });
    // Twice: the second scan finds every variant in the table.
    same(text);
    same(text);
    const read = scanAnswer(text, false)?.logprobs[0]?.content?.map((x) => x.bytes);
    expect(read).toEqual(variants);
  });

  it("strips each scanned logprobs to null, leaving the rest of the answer as it was", () => {
    const a = answer(3, 4, 0);
    const text = JSON.stringify(a, null, 1);
    const scanned = scanAnswer(text, true);
    expect(scanned).toBeDefined();
    const parsed = JSON.parse(scanned?.text ?? "");
    const expected = JSON.parse(text);
    for (const c of expected.choices) c.logprobs = null;
    expect(parsed).toEqual(expected);
  });

  it("gives up (undefined) at anything but the SDK's shape, so the objects are read instead", () => {
    const base = (t: unknown) =>
      JSON.stringify({ choices: [{ logprobs: { content: [t], refusal: null } }] });
    const good = { token: "a", logprob: -1, bytes: [97], top_logprobs: [] };
    expect(scanAnswer(base(good), false)).toBeDefined();
    for (const bad of [
      { ...good, extra: 1 },
      { token: "a", logprob: -1, bytes: [97] },
      { ...good, bytes: [1.5] },
      { ...good, bytes: [256] },
      { ...good, bytes: "a" },
      { ...good, logprob: "x" },
      { ...good, token: 1 },
      { ...good, top_logprobs: [{ token: "b", logprob: -2, bytes: [98], top_logprobs: [] }] },
    ])
      expect(scanAnswer(base(bad), false), JSON.stringify(bad)).toBeUndefined();
    // Text JSON.parse refuses is left to it.
    expect(scanAnswer(`${base(good)}x`, false)).toBeUndefined();
    expect(scanAnswer(base(good).replace("-1", "-01"), false)).toBeUndefined();
    expect(scanAnswer(base(good).replace('"a"', '"a\u0001"'), false)).toBeUndefined();
    expect(scanAnswer(base(good).replace("-1", "-1e400"), false)).toBeUndefined();
    // Duplicate keys (JSON.parse keeps the last) are left to the objects' path too.
    expect(
      scanAnswer(base(good).replace('"logprob":-1', '"logprob":-1,"logprob":-2'), false),
    ).toBeUndefined();
    // No Choice with logprobs: nothing to scan.
    expect(scanAnswer(JSON.stringify({ choices: [{ logprobs: null }] }), false)).toBeUndefined();
  });
});
