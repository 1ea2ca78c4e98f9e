// ART's compact payload (`compact_dump()`): `{format: "art.trajectories",
// version: 1, kind, strings: {"$0": "..."}, data}`, where `data` is the
// ordinary dump with often-repeated strings (values and keys) replaced by
// `$N` references into `strings`. Decoding is one level deep, as ART's: a
// `$N` the table does not hold stays as written.
import { TrajectoryValidationError } from "./errors.js";

/** The `format` of ART's compact payload. */
export const ART_PAYLOAD_FORMAT = "art.trajectories";

/** A compact payload, decoded: its kind and its ordinary JSON data. */
export interface ArtPayload {
  kind: string;
  data: unknown;
}

const FIELDS = ["data", "format", "kind", "strings", "version"];
const REFERENCE = /^\$(?:0|[1-9][0-9]*)$/;

function refuse(what: string, message: string, input?: unknown): never {
  throw new TrajectoryValidationError(what, [{ code: "custom", path: [], message, input }]);
}

/** Whether parsed JSON is an envelope with a `format` (ART's compact payload or another). */
export function isPayloadEnvelope(value: unknown): value is Record<string, unknown> {
  return (
    typeof value === "object" &&
    value !== null &&
    !Array.isArray(value) &&
    Object.hasOwn(value, "format")
  );
}

/**
 * Decodes ART's compact payload (from `compact_dump()`, as an object or a
 * string) into its kind and ordinary JSON data. Refuses another format or
 * version, naming it.
 *
 * @throws TrajectoryValidationError naming what is wrong with the envelope.
 * @example
 * const { kind, data } = decodeArtPayload(await readFile("groups.json", "utf8"));
 * if (kind === "trajectory_groups") groups = (data as unknown[]).map((g) => TrajectoryGroup.fromJSON(g));
 */
export function decodeArtPayload(json: unknown, what = "ART payload"): ArtPayload {
  let value = json;
  if (typeof json === "string") {
    try {
      value = JSON.parse(json);
    } catch {
      refuse(what, "expected a JSON string or an object", json);
    }
  }
  if (!isPayloadEnvelope(value))
    refuse(what, `expected an object with format "${ART_PAYLOAD_FORMAT}"`);
  if (value.format !== ART_PAYLOAD_FORMAT)
    refuse(
      what,
      `format ${JSON.stringify(value.format)} is not one this library reads; expected ART's "${ART_PAYLOAD_FORMAT}" or plain ART JSON`,
    );
  if (value.version !== 1)
    refuse(
      what,
      `"${ART_PAYLOAD_FORMAT}" version ${JSON.stringify(value.version)} is not supported; expected version 1`,
    );
  const keys = Object.keys(value).sort();
  if (keys.join() !== FIELDS.join())
    refuse(
      what,
      `an "${ART_PAYLOAD_FORMAT}" payload holds exactly format, version, kind, strings and data; got ${keys.join(", ")}`,
    );
  if (typeof value.kind !== "string") refuse(what, "kind: expected a string");
  const table = value.strings;
  if (typeof table !== "object" || table === null || Array.isArray(table))
    refuse(what, "strings: expected an object of $N references to strings");
  const strings = new Map<string, string>();
  for (const [key, text] of Object.entries(table)) {
    if (!REFERENCE.test(key)) refuse(what, `strings: ${JSON.stringify(key)} is not a $N reference`);
    if (typeof text !== "string") refuse(what, `strings.${key}: expected a string`);
    strings.set(key, text);
  }
  return { kind: value.kind, data: decode(value.data, strings, what) };
}

function decode(value: unknown, strings: Map<string, string>, what: string): unknown {
  if (typeof value === "string") return strings.get(value) ?? value;
  if (Array.isArray(value)) return value.map((v) => decode(v, strings, what));
  if (typeof value === "object" && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      const name = strings.get(key) ?? key;
      if (Object.hasOwn(out, name))
        refuse(what, `data: decoding gives the key ${JSON.stringify(name)} twice`);
      out[name] = decode(item, strings, what);
    }
    return out;
  }
  return value;
}

/**
 * What `fromJSON` reads: plain ART JSON as given, or the data of a compact
 * payload of the expected kind. Any other envelope is refused naming its
 * format or kind, never read as an empty value.
 */
export function unwrapArtJson(
  json: unknown,
  kind: "trajectory" | "trajectory_group",
  what: string,
): unknown {
  let value = json;
  if (typeof json === "string") {
    try {
      value = JSON.parse(json);
    } catch {
      return json; // parseWire names the problem
    }
  }
  if (!isPayloadEnvelope(value)) return json;
  const payload = decodeArtPayload(value, what);
  if (payload.kind === kind) return payload.data;
  const plural = payload.kind === "trajectories" || payload.kind === "trajectory_groups";
  return refuse(
    what,
    `this "${ART_PAYLOAD_FORMAT}" payload is of kind ${JSON.stringify(payload.kind)}, not ${kind}${
      plural ? "; read a list with decodeArtPayload(json).data and fromJSON on each item" : ""
    }`,
  );
}
