// A token's text and its bytes. A token whose `bytes` are its text's UTF-8
// (almost all of them) is kept as its text alone, and its bytes are made
// again when written; only the others (a character split over tokens, or
// null bytes) keep their bytes. These functions decide which is which and
// make the bytes back, as TextEncoder would (a lone surrogate is U+FFFD).

const utf8 = new TextEncoder();

/** `text` as UTF-8, for the few callers that want the encoder's own bytes. */
export function encodeUtf8(text: string): Uint8Array {
  return utf8.encode(text);
}

// Most tokens are ASCII: their bytes are their char codes, with no encoder call.
function isAscii(token: string): boolean {
  for (let i = 0; i < token.length; i++) if (token.charCodeAt(i) > 127) return false;
  return true;
}

/** The UTF-8 of a token's text, as a plain array. */
export function bytesOf(token: string): number[] {
  if (!isAscii(token)) return Array.from(utf8.encode(token));
  // Pushed, not preallocated: a packed array, which JSON.stringify writes fastest.
  const out: number[] = [];
  for (let i = 0; i < token.length; i++) out.push(token.charCodeAt(i));
  return out;
}

/**
 * Whether `bytes` is the UTF-8 of `text` (as TextEncoder writes it: a lone
 * surrogate is U+FFFD), compared as the text is read, building nothing.
 */
export function isUtf8Of(text: string, bytes: readonly unknown[]): boolean {
  const n = text.length;
  const m = bytes.length;
  if (m < n) return false;
  let j = 0;
  for (let i = 0; i < n; i++) {
    let c = text.charCodeAt(i);
    if (c < 0x80) {
      if (bytes[j++] !== c) return false;
      continue;
    }
    if (c < 0x800) {
      if (bytes[j] !== (0xc0 | (c >> 6)) || bytes[j + 1] !== (0x80 | (c & 63))) return false;
      j += 2;
      continue;
    }
    if (c >= 0xd800 && c <= 0xdfff) {
      const d = c <= 0xdbff && i + 1 < n ? text.charCodeAt(i + 1) : 0;
      if (d >= 0xdc00 && d <= 0xdfff) {
        const cp = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
        if (
          bytes[j] !== (0xf0 | (cp >> 18)) ||
          bytes[j + 1] !== (0x80 | ((cp >> 12) & 63)) ||
          bytes[j + 2] !== (0x80 | ((cp >> 6) & 63)) ||
          bytes[j + 3] !== (0x80 | (cp & 63))
        )
          return false;
        i++;
        j += 4;
        continue;
      }
      c = 0xfffd;
    }
    if (
      bytes[j] !== (0xe0 | (c >> 12)) ||
      bytes[j + 1] !== (0x80 | ((c >> 6) & 63)) ||
      bytes[j + 2] !== (0x80 | (c & 63))
    )
      return false;
    j += 3;
  }
  return j === m;
}

/**
 * Whether `bytes` is the UTF-8 of `text`. The common case (an ASCII token,
 * one byte per char) is compared here, small enough to be inlined into a
 * copy loop; anything else goes through {@link isUtf8Of}.
 */
export function isTextBytes(text: string, bytes: readonly unknown[]): boolean {
  const n = text.length;
  if (bytes.length === n) {
    let i = 0;
    while (i < n && bytes[i] === text.charCodeAt(i)) i++;
    if (i === n) return true;
  }
  return isUtf8Of(text, bytes);
}
