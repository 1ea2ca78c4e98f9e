// The wire JSON of logprobs in columns, written straight as UTF-8 from each
// token's cached prefix: no string to build, flatten and encode first.
import type { Columns } from "./columns.js";
import { encodeUtf8 } from "./utf8.js";

/** Longer than any number's shortest text ("-1.2345678901234567e-308" is 24). */
const NUMBER_BYTES = 26;
const TOP_KEY = encodeUtf8(',"top_logprobs":[');

/** Bytes enough for the wire JSON of `c`'s tokens (its alternatives included). */
function sizeOf(c: Columns): number {
  let size = 2;
  for (let i = 0; i < c.ids.length; i++)
    size += c.table.prefix(c.ids[i] as number).byteLength + NUMBER_BYTES + TOP_KEY.byteLength + 3;
  return c.top ? size + sizeOf(c.top) : size;
}

/**
 * Writes a finite number as JSON.stringify does, in ASCII (checked finite
 * when the columns were made; a template prints numbers the same way).
 */
function writeNumber(out: Uint8Array, at: number, value: number): number {
  const text = `${value}`;
  for (let i = 0; i < text.length; i++) out[at + i] = text.charCodeAt(i);
  return at + text.length;
}

/**
 * Writes the wire JSON of a token list as UTF-8 into `out` at `at`, in
 * choiceToJson's key order, straight from the tokens' cached prefixes: no
 * string to build, flatten and encode first. Returns where it ended.
 */
function writeColumns(c: Columns, out: Uint8Array, at: number): number {
  const { table, top, topEnds } = c;
  out[at++] = 0x5b; // [
  let k = 0;
  for (let i = 0; i < c.ids.length; i++) {
    if (i > 0) out[at++] = 0x2c; // ,
    const prefix = table.prefix(c.ids[i] as number);
    out.set(prefix, at);
    at = writeNumber(out, at + prefix.byteLength, c.logprobs[i] as number);
    if (top && topEnds) {
      out.set(TOP_KEY, at);
      at += TOP_KEY.byteLength;
      const to = topEnds[i] as number;
      for (let first = true; k < to; k++, first = false) {
        if (!first) out[at++] = 0x2c;
        const p = table.prefix(top.ids[k] as number);
        out.set(p, at);
        at = writeNumber(out, at + p.byteLength, top.logprobs[k] as number);
        out[at++] = 0x7d; // }
      }
      out[at++] = 0x5d; // ]
    }
    out[at++] = 0x7d;
  }
  out[at++] = 0x5d;
  return at;
}

const CONTENT_KEY = encodeUtf8('{"content":');
const REFUSAL_KEY = encodeUtf8(',"refusal":');
const NULL = encodeUtf8("null");

function writeNull(out: Uint8Array, at: number): number {
  out.set(NULL, at);
  return at + NULL.byteLength;
}

/**
 * The wire JSON of a `logprobs` object whose lists are in columns (undefined:
 * the list is null), as UTF-8, as `choiceToJson` would write it.
 */
export function logprobsWireBytes(
  content: Columns | undefined,
  refusal: Columns | undefined,
): Uint8Array {
  const size =
    CONTENT_KEY.byteLength +
    REFUSAL_KEY.byteLength +
    (content ? sizeOf(content) : 4) +
    (refusal ? sizeOf(refusal) : 4) +
    1;
  // Not zeroed: every byte up to the end returned is written.
  const out = Buffer.allocUnsafe(size);
  out.set(CONTENT_KEY, 0);
  let at = content
    ? writeColumns(content, out, CONTENT_KEY.byteLength)
    : writeNull(out, CONTENT_KEY.byteLength);
  out.set(REFUSAL_KEY, at);
  at += REFUSAL_KEY.byteLength;
  at = refusal ? writeColumns(refusal, out, at) : writeNull(out, at);
  out[at++] = 0x7d; // }
  return out.subarray(0, at);
}
