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

/** A 2xx answer read whole: its value, or what makes it no chat completion. */
export type ReadAnswer =
  | { ok: true; value: Record<string, unknown> }
  | { ok: false; problem: string };

/** What an API's 2xx answer is: its name, and the list every such answer holds. */
export interface AnswerShape {
  /** E.g. "chat completion". */
  noun: string;
  /** The field that must be a list (`choices`, `output`, `content`). */
  list: string;
}

/** A chat completion: an object with a `choices` list. */
export const CHAT_ANSWER: AnswerShape = { noun: "chat completion", list: "choices" };

/** Reads a 2xx answer's bytes as `shape` says (a chat completion by default), or says what it is instead. */
export function readCompletion(
  status: number,
  type: string,
  bytes: Buffer,
  shape: AnswerShape = CHAT_ANSWER,
): ReadAnswer {
  const start = JSON.stringify(bytes.subarray(0, 60).toString("utf8"));
  const said = `the upstream answered ${status}`;
  if (!/json/i.test(type))
    return {
      ok: false,
      problem: `${said} with ${type ? `content-type ${type}` : "no content-type"}, not a JSON ${shape.noun} (it starts ${start})`,
    };
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString("utf8"));
  } catch (error) {
    return {
      ok: false,
      problem: `${said} with JSON that does not parse, cut off or malformed (${(error as Error).message}; ${bytes.length} bytes)`,
    };
  }
  if (!value || typeof value !== "object" || Array.isArray(value))
    return { ok: false, problem: `${said} with JSON ${start}, not a ${shape.noun} object` };
  if (!Array.isArray((value as Record<string, unknown>)[shape.list]))
    return {
      ok: false,
      problem: `${said} with a JSON object that has no ${shape.list} list, not a ${shape.noun} (it starts ${start})`,
    };
  return { ok: true, value: value as Record<string, unknown> };
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

  #event(event: string): string {
    const lines = event.split(/\r?\n/);
    const data = lines.filter((l) => l.startsWith("data:"));
    if (data.length !== 1) return event;
    const line = data[0] as string;
    const payload = line.slice(5).trimStart();
    if (!payload.startsWith("{")) return event;
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
