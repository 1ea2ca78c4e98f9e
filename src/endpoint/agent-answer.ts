// What the agent is handed of an upstream's 2xx answer: the fields only the
// recorder asked for are taken out again (as a wrapped client in this
// process hands back its answer), and an answer that is no chat completion
// at all is named for what it is, so the call is logged as failed.

/** What the agent did not ask for, and so does not get. */
export interface Strip {
  /** Each Choice's `logprobs` becomes `null`. */
  logprobs: boolean;
  /** `token_ids` (each Choice) and `prompt_token_ids` are left out. */
  tokenIds: boolean;
}

/** What to take out of the answers to `body`, or undefined for nothing. */
export function stripFor(body: Record<string, unknown>): Strip | undefined {
  const logprobs = body.logprobs !== true;
  const tokenIds = body.return_token_ids !== true;
  return logprobs || tokenIds ? { logprobs, tokenIds } : undefined;
}

/** Takes out of a completion (or a stream's chunk) what `strip` says; whether anything changed. */
export function stripAnswer(value: Record<string, unknown>, strip: Strip): boolean {
  let changed = false;
  if (strip.tokenIds && "prompt_token_ids" in value) {
    delete value.prompt_token_ids;
    changed = true;
  }
  const choices = value.choices;
  if (!Array.isArray(choices)) return changed;
  for (const choice of choices) {
    if (!choice || typeof choice !== "object") continue;
    const c = choice as Record<string, unknown>;
    if (strip.logprobs && c.logprobs != null) {
      c.logprobs = null;
      changed = true;
    }
    if (strip.tokenIds && "token_ids" in c) {
      delete c.token_ids;
      changed = true;
    }
  }
  return changed;
}

/** A 2xx answer checked before the SDK reads it, or what makes it no chat completion. */
export type CheckedAnswer = { ok: true } | { ok: false; problem: string };

/** What an API's 2xx answer is: its name, and the list every such answer holds. */
export interface AnswerShape {
  /** E.g. "chat completion". */
  noun: string;
  /** The field that must be a list (`choices`, `output`, `content`). */
  list: string;
}

/** A chat completion: an object with a `choices` list. */
export const CHAT_ANSWER: AnswerShape = { noun: "chat completion", list: "choices" };

const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;

/**
 * Checks a 2xx answer's bytes as `shape` says (a chat completion by default)
 * without parsing them (the SDK's parse is their one read): JSON by its
 * content-type, one object from its first byte to its last, and the list's
 * key in it. What passes and still does not parse fails in the SDK, logged
 * as a failed call all the same.
 */
export function checkCompletion(
  status: number,
  type: string,
  bytes: Buffer,
  shape: AnswerShape = CHAT_ANSWER,
): CheckedAnswer {
  const start = JSON.stringify(bytes.subarray(0, 60).toString("utf8"));
  const said = `the upstream answered ${status}`;
  if (!/json/i.test(type))
    return {
      ok: false,
      problem: `${said} with ${type ? `content-type ${type}` : "no content-type"}, not a JSON ${shape.noun} (it starts ${start})`,
    };
  let first = 0;
  while (first < bytes.length && isSpace(bytes[first] as number)) first++;
  let last = bytes.length - 1;
  while (last > first && isSpace(bytes[last] as number)) last--;
  if (bytes[first] !== OPEN_OBJECT)
    return { ok: false, problem: `${said} with JSON ${start}, not a ${shape.noun} object` };
  if (bytes[last] !== CLOSE_OBJECT)
    return {
      ok: false,
      problem: `${said} with JSON that does not parse, cut off or malformed (it does not end where its object would; ${bytes.length} bytes)`,
    };
  if (!bytes.includes(`"${shape.list}"`))
    return {
      ok: false,
      problem: `${said} with a JSON object that has no ${shape.list} list, not a ${shape.noun} (it starts ${start})`,
    };
  return { ok: true };
}

function isSpace(c: number): boolean {
  return c === 32 || c === 10 || c === 13 || c === 9;
}

type Json = Record<string, unknown>;
const isRecord = (v: unknown): v is Json =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * What the agent is handed of a 2xx answer the SDK parsed into `parsed`:
 * the upstream's `bytes`, or, where `strip` takes something out, the bytes
 * with the token id lists cut out (found by their keys, and only when as
 * many were found as the parsed answer holds), or else the answer written
 * again without them (logprobs the agent did not ask for are cut so, from
 * copies of the SDK's objects).
 */
export function agentBody(bytes: Buffer, strip: Strip | undefined, parsed: unknown): Buffer {
  if (!strip || !isRecord(parsed) || !Array.isArray(parsed.choices)) return bytes;
  let ids = 0;
  for (const c of parsed.choices) if (strip.tokenIds && isRecord(c) && "token_ids" in c) ids++;
  const prompt = strip.tokenIds && "prompt_token_ids" in parsed ? 1 : 0;
  const logprobs = strip.logprobs && hasNonNullKey(bytes, '"logprobs"');
  if (!logprobs && ids + prompt === 0) return bytes;
  if (!logprobs) {
    const cut = cutIdLists(bytes, ids, prompt);
    if (cut) return cut;
  }
  // The SDK's objects lack the logprobs the agent asked for where the
  // recorder read them from the text (its scan): then the bytes are parsed here.
  let value = parsed;
  if (!logprobs)
    try {
      value = JSON.parse(bytes.toString("utf8")) as Json;
    } catch {
      return bytes;
    }
  return Buffer.from(JSON.stringify(strippedCopy(value, strip)));
}

/** `value` without what `strip` takes out, sharing everything else (the SDK's objects stay as they are). */
function strippedCopy(value: Json, strip: Strip): Json {
  const out: Json = { ...value };
  if (strip.tokenIds) delete out.prompt_token_ids;
  out.choices = (value.choices as unknown[]).map((c) => {
    if (!isRecord(c)) return c;
    const choice: Json = { ...c };
    if (strip.logprobs && choice.logprobs != null) choice.logprobs = null;
    if (strip.tokenIds) delete choice.token_ids;
    return choice;
  });
  return out;
}

/**
 * Whether `key` (quoted) appears in `bytes` as a key whose value is not null.
 * A quote inside a JSON string is escaped, so an unescaped `"key":` is a key.
 */
function hasNonNullKey(bytes: Buffer, key: string): boolean {
  for (let at = bytes.indexOf(key); at !== -1; at = bytes.indexOf(key, at + 1)) {
    let p = skipSpace(bytes, at + key.length);
    if (bytes[p] !== COLON) continue;
    p = skipSpace(bytes, p + 1);
    if (bytes.toString("latin1", p, p + 4) !== "null") return true;
  }
  return false;
}

const COLON = 0x3a;
const COMMA = 0x2c;
const BACKSLASH = 0x5c;
const OPEN_LIST = 0x5b;
const CLOSE_LIST = 0x5d;

function skipSpace(bytes: Buffer, p: number): number {
  while (p < bytes.length && isSpace(bytes[p] as number)) p++;
  return p;
}

/**
 * `bytes` without its `"token_ids": [...]` and `"prompt_token_ids": [...]`
 * members (and one comma beside each), or undefined when the keys found are
 * not exactly the `ids` and `prompt` lists the parsed answer holds, or a list
 * is not plain numbers: the caller then writes the answer again instead.
 */
function cutIdLists(bytes: Buffer, ids: number, prompt: number): Buffer | undefined {
  const cuts: Array<[number, number]> = [];
  for (const [key, want] of [
    ['"token_ids"', ids],
    ['"prompt_token_ids"', prompt],
  ] as const) {
    let found = 0;
    for (let at = bytes.indexOf(key); at !== -1; at = bytes.indexOf(key, at + key.length)) {
      if (bytes[at - 1] === BACKSLASH) return undefined;
      let p = skipSpace(bytes, at + key.length);
      if (bytes[p] !== COLON) continue;
      p = skipSpace(bytes, p + 1);
      if (bytes[p] !== OPEN_LIST) return undefined;
      const close = bytes.indexOf(CLOSE_LIST, p);
      if (close === -1 || !/^[\d\s,.eE+-]*$/.test(bytes.toString("latin1", p + 1, close)))
        return undefined;
      found++;
      const before = lastNonSpace(bytes, at - 1);
      const after = skipSpace(bytes, close + 1);
      if (bytes[before] === COMMA) cuts.push([before, close + 1]);
      else if (bytes[after] === COMMA) cuts.push([at, after + 1]);
      else cuts.push([at, close + 1]);
    }
    if (found !== want) return undefined;
  }
  cuts.sort((a, b) => a[0] - b[0]);
  const parts: Buffer[] = [];
  let from = 0;
  for (const [start, end] of cuts) {
    if (start > from) parts.push(bytes.subarray(from, start));
    from = Math.max(from, end);
  }
  parts.push(bytes.subarray(from));
  return Buffer.concat(parts);
}

function lastNonSpace(bytes: Buffer, p: number): number {
  while (p > 0 && isSpace(bytes[p] as number)) p--;
  return p;
}

/**
 * Takes what {@link Strip} says out of an SSE stream's chunks on their way
 * to the agent: each whole event whose one `data:` line is a JSON object is
 * written again without those fields; anything else passes as it came. An
 * event split across reads is held until its end arrives.
 */
export class SseStripper {
  readonly #strip: Strip;
  readonly #decoder = new TextDecoder();
  #pending = "";

  constructor(strip: Strip) {
    this.#strip = strip;
  }

  /** The bytes of the whole events `chunk` completes, rewritten. */
  push(chunk: Uint8Array): Uint8Array {
    this.#pending += this.#decoder.decode(chunk, { stream: true });
    let out = "";
    for (;;) {
      const end = /\r?\n\r?\n/.exec(this.#pending);
      if (!end) break;
      const cut = end.index + end[0].length;
      out += this.#event(this.#pending.slice(0, end.index)) + end[0];
      this.#pending = this.#pending.slice(cut);
    }
    return Buffer.from(out);
  }

  /** What is left at the stream's end, as it came. */
  flush(): Uint8Array {
    const rest = this.#pending + this.#decoder.decode();
    this.#pending = "";
    return Buffer.from(rest);
  }

  /** Whether `payload` may hold a field to take out (a quote in a string is escaped, so a key is found by its quoted name). */
  #mayHold(payload: string): boolean {
    if (this.#strip.tokenIds && payload.includes('_ids"')) return true;
    if (!this.#strip.logprobs) return false;
    for (
      let at = payload.indexOf('"logprobs"');
      at !== -1;
      at = payload.indexOf('"logprobs"', at + 1)
    )
      if (!/^"logprobs"\s*:\s*null/.test(payload.slice(at, at + 24))) return true;
    return false;
  }

  #event(event: string): string {
    const lines = event.split(/\r?\n/);
    const data = lines.filter((l) => l.startsWith("data:"));
    if (data.length !== 1) return event;
    const line = data[0] as string;
    const payload = line.slice(5).trimStart();
    if (!payload.startsWith("{")) return event;
    // Most events hold nothing to take out (a server that sends no token ids): no parse.
    if (!this.#mayHold(payload)) return event;
    let value: unknown;
    try {
      value = JSON.parse(payload);
    } catch {
      return event;
    }
    if (!stripAnswer(value as Record<string, unknown>, this.#strip)) return event;
    return lines.map((l) => (l === line ? `data: ${JSON.stringify(value)}` : l)).join("\n");
  }
}
