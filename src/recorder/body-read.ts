// The body-read patch: the SDK's own read of a JSON answer goes through the
// recorder's logprob scan, on the one Response it reads, for that read only.
import { type ScannedAnswer, scanAnswer } from "../logprobs/index.js";

/** The parts of a fetch `Response` the scan reads. */
interface ResponseLike {
  text: () => Promise<string>;
  json?: unknown;
  status?: unknown;
  url?: unknown;
  headers?: { get?: (name: string) => string | null };
}

type Key = "text" | "json";

const nativeJson: unknown = globalThis.Response?.prototype.json;

/**
 * Whether `json` is a Response class's own body reader (undici's, or
 * node-fetch's under openai 4), which the patch may stand in for: a
 * subclass's or a mock's own `json()` is the caller's code and runs as it is.
 */
function standardJson(response: object): boolean {
  const json = (response as ResponseLike).json;
  if (json === nativeJson) return typeof json === "function";
  if (typeof json !== "function" || Object.hasOwn(response, "json")) return false;
  let proto = Object.getPrototypeOf(response) as object | null;
  while (proto && !Object.hasOwn(proto, "json")) proto = Object.getPrototypeOf(proto);
  const owner = proto && (proto as { constructor?: { name?: unknown } }).constructor;
  return owner?.name === "Response" || owner?.name === "Body";
}

/** Whether `key` of `response` can be set as an own property and later put back. */
function redefinable(response: object, key: Key): boolean {
  const own = Object.getOwnPropertyDescriptor(response, key);
  return own ? own.configurable === true : Object.isExtensible(response);
}

/**
 * Whether the SDK reads this answer as JSON (openai 4 to 7 alike: a media
 * type naming application/json or ending in +json). Not lowercased, as
 * openai 4 does not: where the majors differ the scan is left out and the
 * recorder reads the objects.
 */
function readAsJson(response: ResponseLike): boolean {
  if (response.status === 204) return false;
  const type = response.headers?.get?.("content-type");
  if (typeof type !== "string") return false;
  const semicolon = type.indexOf(";");
  const media = (semicolon < 0 ? type : type.slice(0, semicolon)).trim();
  // An empty body needs no header read of its own: the scan gives up on ""
  // and the SDK's read fails as it would unpatched (see originalJsonError).
  return media.includes("application/json") || media.endsWith("+json");
}

/**
 * What the original `json()` throws for `raw` (node-fetch's `FetchError` of
 * type "invalid-json" under openai 4, undici's SyntaxError): run on a Response
 * of the same class holding the same text, where one can be built.
 */
async function originalJsonError(
  response: ResponseLike,
  json: unknown,
  raw: string,
  error: unknown,
): Promise<never> {
  let copy: object;
  try {
    const Class = (response as unknown as { constructor: new (b: string, i: object) => object })
      .constructor;
    // node-fetch names the URL in its error; its Response keeps the one given.
    copy = new Class(raw, {
      status: response.status,
      headers: response.headers,
      url: response.url,
    });
  } catch {
    throw error;
  }
  await (json as (this: object) => Promise<unknown>).call(copy);
  throw error;
}

/**
 * Has the SDK's read of a JSON answer (`response.json()` in openai 4 to 6,
 * `response.text()` then JSON.parse in 7) read the text once, scan it for
 * logprobs (`found` gets what the scan read, straight into the compact
 * form) and hand on the text, or, with `strip`, the text without them. The
 * scan gives up at anything unexpected and the SDK gets the text as it came.
 * Each patched method is the response's own property for this read only:
 * what was there before (a mock's own methods, reused across calls) is put
 * back, and a method that cannot be set is left alone (the recorder then
 * reads the parsed objects). Returns how to put the response back as it was
 * (undefined: nothing was patched).
 */
export function scanBody(
  props: unknown,
  strip: boolean,
  found: (scanned: ScannedAnswer) => void,
): (() => void) | undefined {
  const p = props as { response?: ResponseLike; options?: { stream?: unknown } } | null;
  const response = p?.response;
  if (!response || typeof response !== "object" || typeof response.text !== "function")
    return undefined;
  if (p?.options?.stream || !readAsJson(response)) return undefined;
  const patchText = redefinable(response, "text");
  const patchJson = standardJson(response) && redefinable(response, "json");
  if (!patchText && !patchJson) return undefined;
  const text = response.text;
  const json = response.json;
  const saved = {
    text: Object.getOwnPropertyDescriptor(response, "text"),
    json: Object.getOwnPropertyDescriptor(response, "json"),
  };
  const restore = (key: Key) => {
    const own = saved[key];
    if (own) Object.defineProperty(response, key, own);
    else delete response[key];
  };
  let undone = false;
  const undo = () => {
    if (undone) return;
    undone = true;
    if (patchText) restore("text");
    if (patchJson) restore("json");
  };
  const read = async (): Promise<string> => {
    undo();
    const raw = await text.call(response);
    let scan: ScannedAnswer | undefined;
    try {
      scan = typeof raw === "string" ? scanAnswer(raw, strip) : undefined;
    } catch {
      // A defect of the scan must not fail the caller's call: read the objects.
      scan = undefined;
    }
    if (!scan) return raw;
    found(scan);
    return scan.text;
  };
  const readJson = async () => {
    const body = await read();
    try {
      return JSON.parse(body);
    } catch (error) {
      return originalJsonError(response, json, body, error);
    }
  };
  if (patchText)
    Object.defineProperty(response, "text", { configurable: true, writable: true, value: read });
  if (patchJson)
    Object.defineProperty(response, "json", {
      configurable: true,
      writable: true,
      value: readJson,
    });
  return undo;
}
