/**
 * A fetch response's body, read to its end unless it holds more than
 * `maxBytes`: then nothing past the cap is read (a `content-length` above it
 * is refused before reading), the body is cancelled, and `undefined` comes
 * back so the caller can say what the cap was for.
 */
export async function readBodyCapped(
  response: Response,
  maxBytes: number,
): Promise<Buffer | undefined> {
  const declared = Number(response.headers.get("content-length"));
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel().catch(() => {});
    return undefined;
  }
  if (!response.body) return Buffer.alloc(0);
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => {});
      return undefined;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}
