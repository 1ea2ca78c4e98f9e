// Decimal numbers of 16 to 18 significant digits read to the double
// JSON.parse gives, without making a string for Number() to read. Servers
// write logprobs as shortest round-trip doubles: 16 or 17 digits, above
// 2^53, which integer arithmetic in a double cannot hold exactly. Here the
// digits are held as two exact parts (an error-free sum), divided once, and
// the quotient is checked by its exact remainder (an error-free product):
// it is the nearest double when the remainder is under half a unit in its
// last place. Anything near a tie, or that two tries do not settle, is NaN:
// the caller then asks Number(), which is always right.

/** Exact powers of ten (10^22 is the last a double holds exactly). */
const POW10 = Array.from({ length: 23 }, (_, i) => 10 ** i);
/** Dekker's splitter, 2^27 + 1: cuts a double into two of 26 bits each. */
const SPLITTER = 134217729;
const SPLIT_HI = POW10.map((p) => {
  const c = SPLITTER * p;
  return c - (c - p);
});
const SPLIT_LO = POW10.map((p, i) => p - (SPLIT_HI[i] as number));
/** Half a unit in the last place of a double whose biased exponent is the index. */
const HALF_ULP = Array.from({ length: 2047 }, (_, e) => 2 ** (e - 1076));
/** How close to a tie the remainder may come and still be trusted. */
const MARGIN = 2 ** -20;

// A double's bits, to step to its neighbours and read its exponent.
const bits = new Float64Array(1);
const words = new Uint32Array(bits.buffer);
bits[0] = 1;
/** The high word comes second on little-endian machines; elsewhere Number() reads every number. */
const LITTLE_ENDIAN = words[1] === 0x3ff00000;

/**
 * The double nearest to the decimal digits of `s` from `from` to `to` (a
 * `.` among them skipped) divided by 10^`d` (1 ≤ d ≤ 22), or NaN when not
 * settled here (more than 18 significant digits, fewer than 10, near a tie).
 */
export function longDigits(s: string, from: number, to: number, d: number): number {
  if (!LITTLE_ENDIAN) return Number.NaN;
  // The first 9 significant digits in `a`, the rest (k of them) in `b`.
  let a = 0;
  let b = 0;
  let k = 0;
  for (let q = from; q < to; q++) {
    const c = s.charCodeAt(q);
    if (c === 46) continue;
    if (a < 100000000) a = a * 10 + (c - 48);
    else {
      b = b * 10 + (c - 48);
      k++;
    }
  }
  if (k === 0 || k > 9) return Number.NaN;
  // a·10^k = (a·5^k)·2^k is exact (a < 10^9, 5^9 < 2^21), and hi + lo is
  // exactly the digits' integer (x ≥ b, so the two-sum is exact).
  const x = a * (POW10[k] as number);
  const hi = x + b;
  const lo = b - (hi - x);
  const p10 = POW10[d] as number;
  const pHi = SPLIT_HI[d] as number;
  const pLo = SPLIT_LO[d] as number;
  let q = hi / p10;
  for (let tries = 0; tries < 2; tries++) {
    // q·10^d = p + err exactly (Dekker's product); hi - p is exact as the two are close.
    const p = q * p10;
    const c = SPLITTER * q;
    const qHi = c - (c - q);
    const qLo = q - qHi;
    const err = qHi * pHi - p + qHi * pLo + qLo * pHi + qLo * pLo;
    const rest = hi - p + (lo - err);
    bits[0] = q;
    const high = words[1] as number;
    const low = words[0] as number;
    const half = (HALF_ULP[high >>> 20] as number) * p10;
    // Below a power of two the next double down is half as far.
    if (rest < 0 && low === 0 && (high & 0xfffff) === 0) return Number.NaN;
    const size = rest < 0 ? -rest : rest;
    if (size < half * (1 - MARGIN)) return q;
    if (size <= half * (1 + MARGIN)) return Number.NaN;
    // The neighbour towards the digits' value.
    if (rest > 0) {
      if (low === 0xffffffff) {
        words[0] = 0;
        words[1] = high + 1;
      } else words[0] = low + 1;
    } else if (low === 0) {
      words[0] = 0xffffffff;
      words[1] = high - 1;
    } else words[0] = low - 1;
    q = bits[0] as number;
  }
  return Number.NaN;
}
