// Token lists in columns: each token as an id into a TokenTable, its logprob
// beside it, and its alternatives the same way. Made from a capture of the
// SDK's objects or from a scan of the answer's text; read back as the SDK's
// objects.
import type { TokenCapture } from "./capture.js";
import type { TokenTable } from "./token-table.js";

/** A token logprob as the SDK gives it. */
export interface TokenLogprob {
  token: string;
  logprob: number;
  bytes: number[] | null;
  top_logprobs?: TokenLogprob[];
}

/** Tokens in columns; `top` holds the alternatives of all tokens, `topEnds[i]` where token i's end. */
export interface Columns {
  table: TokenTable;
  ids: Uint32Array;
  logprobs: Float64Array;
  top: Columns | undefined;
  topEnds: Uint32Array | undefined;
}

/**
 * The columns of captured tokens: their texts become ids of `table`. The
 * columns share one buffer (logprobs first, for their alignment): one
 * allocation per list, 12 bytes per token (16 with alternatives' ends).
 */
export function toColumns(capture: TokenCapture, table: TokenTable): Columns {
  const n = capture.length;
  const ends = capture.topEnds;
  const buffer = new ArrayBuffer(n * (ends ? 16 : 12));
  const logprobs = new Float64Array(buffer, 0, n);
  const ids = new Uint32Array(buffer, n * 8, n);
  const topEnds = ends && new Uint32Array(buffer, n * 12, n);
  const { texts, odd } = capture;
  logprobs.set(capture.logprobs);
  if (topEnds) topEnds.set(ends as number[]);
  if (odd === undefined) for (let i = 0; i < n; i++) ids[i] = table.plainId(texts[i] as string);
  else
    for (let i = 0; i < n; i++) {
      const bytes = odd.get(i);
      ids[i] =
        bytes === undefined
          ? table.plainId(texts[i] as string)
          : table.oddId(texts[i] as string, bytes);
    }
  const top = capture.top && toColumns(capture.top, table);
  return { table, ids, logprobs, top, topEnds };
}

/**
 * Columns from ids of `table` and logprobs gathered in plain arrays (a scan
 * of the answer's bytes): one buffer, laid out as {@link toColumns} does.
 */
export function columnsOf(
  table: TokenTable,
  ids: readonly number[],
  logprobs: readonly number[],
  top?: { columns: Columns; ends: readonly number[] },
): Columns {
  const n = ids.length;
  const buffer = new ArrayBuffer(n * (top ? 16 : 12));
  const lp = new Float64Array(buffer, 0, n);
  const idColumn = new Uint32Array(buffer, n * 8, n);
  lp.set(logprobs);
  idColumn.set(ids);
  let topEnds: Uint32Array | undefined;
  if (top) {
    topEnds = new Uint32Array(buffer, n * 12, n);
    topEnds.set(top.ends);
  }
  return { table, ids: idColumn, logprobs: lp, top: top?.columns, topEnds };
}

/**
 * Token `i` as the SDK's object. `shared`: its bytes array is the table's
 * frozen one, for output that JSON.stringify reads and lets go; otherwise a
 * copy of its own, for output a caller keeps and may edit.
 */
function tokenAt(c: Columns, i: number, shared: boolean): TokenLogprob {
  const id = c.ids[i] as number;
  const bytes = c.table.sharedBytes(id);
  const out: TokenLogprob = {
    token: c.table.tokens[id] as string,
    bytes: (shared ? bytes : (bytes?.slice() ?? null)) as number[] | null,
    logprob: c.logprobs[i] as number,
  };
  if (c.topEnds && c.top) {
    const to = c.topEnds[i] as number;
    const top: TokenLogprob[] = [];
    for (let k = i === 0 ? 0 : (c.topEnds[i - 1] as number); k < to; k++)
      top.push(tokenAt(c.top, k, shared));
    out.top_logprobs = top;
  }
  return out;
}

export function fromColumns(c: Columns, shared: boolean): TokenLogprob[] {
  const out: TokenLogprob[] = [];
  for (let i = 0; i < c.ids.length; i++) out.push(tokenAt(c, i, shared));
  return out;
}
