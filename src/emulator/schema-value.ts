// Tool-call arguments that validate against the tool's JSON Schema. Strings
// are words drawn from the policy (so training can shape them); the structure
// follows the schema: types, enum/const, anyOf/oneOf/allOf, local $ref,
// lengths, item counts, numeric bounds, required properties, formats and
// (a common subset of) patterns.
import { stringMatching } from "./pattern.js";

type Schema = Record<string, unknown>;

/** Where the random parts of a value come from. */
export interface ValueSource {
  random(): number;
  /** A word sampled from the policy; `among` (vocabulary words) narrows the draw. */
  word(among?: readonly string[]): string;
  /** Whether the policy can say `text` as one word. */
  isWord(text: string): boolean;
}

interface Context {
  root: unknown;
  source: ValueSource;
}

/** Past this nesting depth optional parts are left out, so recursive schemas end. */
const DEEP = 6;

/**
 * A value valid against `schema` (the tool's `parameters`), an object when the
 * schema says nothing.
 */
export function valueForSchema(schema: unknown, source: ValueSource): unknown {
  const root = schema ?? { type: "object" };
  const ctx = { root, source };
  const resolved = resolve(root, ctx);
  if (!("type" in resolved) && !hasShapeHints(resolved)) return {};
  return generate(resolved, ctx, 0);
}

function isSchema(x: unknown): x is Schema {
  return !!x && typeof x === "object" && !Array.isArray(x);
}

function pick<T>(xs: readonly T[], random: () => number): T {
  return xs[Math.floor(random() * xs.length)] as T;
}

/** Follows a local `$ref` ("#", "#/$defs/X", "#/definitions/X", any JSON pointer). */
function deref(ref: string, root: unknown): unknown {
  if (!ref.startsWith("#")) return {};
  const parts = ref
    .slice(1)
    .split("/")
    .filter((p, i) => i > 0 || p !== "")
    .map((p) => decodeURIComponent(p).replace(/~1/g, "/").replace(/~0/g, "~"));
  let node: unknown = root;
  for (const p of parts) node = isSchema(node) || Array.isArray(node) ? (node as Schema)[p] : {};
  return node ?? {};
}

/** Two schemas that must both hold, as one (properties and required are combined). */
function merge(a: Schema, b: Schema): Schema {
  const out: Schema = { ...a, ...b };
  if (isSchema(a.properties) && isSchema(b.properties))
    out.properties = { ...a.properties, ...b.properties };
  if (Array.isArray(a.required) || Array.isArray(b.required))
    out.required = [
      ...new Set([...((a.required as string[]) ?? []), ...((b.required as string[]) ?? [])]),
    ];
  return out;
}

/** The schema with `$ref` and `allOf` folded in; `true` and `{}` accept anything. */
function resolve(schema: unknown, ctx: Context): Schema {
  if (!isSchema(schema)) return {};
  let s: Schema = schema;
  for (let hops = 0; typeof s.$ref === "string" && hops < 32; hops++) {
    const { $ref, ...rest } = s;
    const target = deref($ref as string, ctx.root);
    s = merge(isSchema(target) ? target : {}, rest);
  }
  if (Array.isArray(s.allOf)) {
    const { allOf, ...rest } = s;
    s = (allOf as unknown[]).reduce<Schema>((acc, sub) => merge(acc, resolve(sub, ctx)), rest);
  }
  return s;
}

function hasShapeHints(s: Schema): boolean {
  return ["const", "enum", "anyOf", "oneOf", "properties", "items"].some((k) => k in s);
}

function typeOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

function fitsType(value: unknown, types: string[]): boolean {
  const t = typeOf(value);
  return types.includes(t) || (t === "integer" && types.includes("number"));
}

function generate(schema: unknown, ctx: Context, depth: number): unknown {
  // A schema that only ever refers to itself has no finite value.
  if (depth > 64) return null;
  const s = resolve(schema, ctx);
  const { random } = ctx.source;
  const types = Array.isArray(s.type)
    ? (s.type as string[])
    : typeof s.type === "string"
      ? [s.type]
      : [];
  if ("const" in s) return s.const;
  if (Array.isArray(s.enum) && s.enum.length > 0) {
    const typed = types.length ? s.enum.filter((v) => fitsType(v, types)) : s.enum;
    const values = typed.length ? typed : s.enum;
    // Words the policy can say are its choice, so training can learn which one.
    if (values.every((v) => typeof v === "string" && ctx.source.isWord(v)))
      return ctx.source.word(values as string[]);
    return pick(values, random);
  }
  const branches = (s.anyOf ?? s.oneOf) as unknown[] | undefined;
  if (Array.isArray(branches) && branches.length > 0) {
    const { anyOf: _a, oneOf: _o, ...rest } = s;
    return generate(merge(rest, resolve(pick(branches, random), ctx)), ctx, depth + 1);
  }
  const type = types.length ? pick(types, random) : impliedType(s);
  switch (type) {
    case "string":
      return stringFor(s, ctx.source);
    case "integer":
      return integerFor(s, random);
    case "number":
      return numberFor(s, random);
    case "boolean":
      return random() < 0.5;
    case "null":
      return null;
    case "array":
      return arrayFor(s, ctx, depth);
    default:
      return objectFor(s, ctx, depth);
  }
}

function impliedType(s: Schema): string {
  if ("properties" in s || "required" in s || "additionalProperties" in s) return "object";
  if ("items" in s || "prefixItems" in s || "minItems" in s) return "array";
  if (["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"].some((k) => k in s))
    return "number";
  return "string";
}

const num = (x: unknown) => (typeof x === "number" ? x : undefined);

function formatted(format: string, source: ValueSource): string | undefined {
  const r = source.random;
  const when = new Date(Date.UTC(2024, 0, 1) + Math.floor(r() * 365 * 86_400) * 1000);
  const hex = (n: number) =>
    Array.from({ length: n }, () => Math.floor(r() * 16).toString(16)).join("");
  switch (format) {
    case "date-time":
      return when.toISOString();
    case "date":
      return when.toISOString().slice(0, 10);
    case "time":
      return `${when.toISOString().slice(11, 19)}Z`;
    case "email":
      return `${source.word()}@example.com`;
    case "hostname":
      return `${source.word()}.example.com`;
    case "uri":
    case "url":
      return `https://example.com/${source.word()}`;
    case "uuid":
      return `${hex(8)}-${hex(4)}-4${hex(3)}-a${hex(3)}-${hex(12)}`;
    case "ipv4":
      return `10.0.${Math.floor(r() * 256)}.${Math.floor(r() * 256)}`;
    default:
      return undefined;
  }
}

function stringFor(s: Schema, source: ValueSource): string {
  const min = num(s.minLength) ?? 0;
  const max = num(s.maxLength) ?? Number.POSITIVE_INFINITY;
  if (typeof s.format === "string") {
    const f = formatted(s.format, source);
    if (f !== undefined) return f;
  }
  if (typeof s.pattern === "string") {
    const m = stringMatching(s.pattern, source.random, min, max);
    if (m !== undefined) return m;
  }
  let text = source.word();
  while (text.length < min) text += ` ${source.word()}`;
  return text.length > max ? text.slice(0, max) : text;
}

/** Inclusive bounds from minimum/maximum and both forms of exclusive bounds. */
function bounds(s: Schema) {
  const exMin = s.exclusiveMinimum;
  const exMax = s.exclusiveMaximum;
  return {
    lo: num(exMin) ?? num(s.minimum),
    loOpen: typeof exMin === "number" || (exMin === true && typeof s.minimum === "number"),
    hi: num(exMax) ?? num(s.maximum),
    hiOpen: typeof exMax === "number" || (exMax === true && typeof s.maximum === "number"),
  };
}

function integerFor(s: Schema, random: () => number): number {
  const b = bounds(s);
  let lo = b.lo === undefined ? undefined : b.loOpen ? Math.floor(b.lo) + 1 : Math.ceil(b.lo);
  let hi = b.hi === undefined ? undefined : b.hiOpen ? Math.ceil(b.hi) - 1 : Math.floor(b.hi);
  lo ??= hi === undefined ? 0 : Math.min(0, hi - 9);
  hi ??= lo + 9;
  const step = num(s.multipleOf);
  if (step && Number.isInteger(step)) {
    const first = Math.ceil(lo / step);
    const last = Math.floor(hi / step);
    if (first <= last) return (first + Math.floor(random() * (last - first + 1))) * step;
  }
  return lo + Math.floor(random() * (hi - lo + 1));
}

function numberFor(s: Schema, random: () => number): number {
  const b = bounds(s);
  const lo = b.lo ?? (b.hi === undefined ? 0 : Math.min(0, b.hi - 10));
  const hi = b.hi ?? lo + 10;
  const step = num(s.multipleOf);
  if (step) {
    const first = Math.ceil(lo / step) + (b.loOpen && Number.isInteger(lo / step) ? 1 : 0);
    const last = Math.floor(hi / step) - (b.hiOpen && Number.isInteger(hi / step) ? 1 : 0);
    if (first <= last) return (first + Math.floor(random() * (last - first + 1))) * step;
  }
  const inside = (x: number) => (b.loOpen ? x > lo : x >= lo) && (b.hiOpen ? x < hi : x <= hi);
  const raw = lo + random() * (hi - lo);
  const rounded = Math.round(raw * 10) / 10;
  if (inside(rounded)) return rounded;
  return inside(raw) ? raw : (lo + hi) / 2;
}

function arrayFor(s: Schema, ctx: Context, depth: number): unknown[] {
  const { random } = ctx.source;
  const prefix = Array.isArray(s.prefixItems)
    ? s.prefixItems
    : Array.isArray(s.items)
      ? s.items // draft-07 tuple form
      : [];
  const rest = Array.isArray(s.items) ? s.additionalItems : s.items;
  const max = Math.min(
    num(s.maxItems) ?? Number.POSITIVE_INFINITY,
    rest === false ? prefix.length : Number.POSITIVE_INFINITY,
  );
  const min = Math.min(num(s.minItems) ?? 1, max);
  const top = depth >= DEEP ? min : Math.min(max, Math.max(min, prefix.length) + 2);
  const count = min + Math.floor(random() * (top - min + 1));
  const out: unknown[] = [];
  const seen = new Set<string>();
  for (let i = 0; i < count; i++) {
    const itemSchema = i < prefix.length ? prefix[i] : rest === undefined ? {} : rest;
    let value = generate(itemSchema, ctx, depth + 1);
    // uniqueItems: draw again a few times; a tiny domain may still repeat.
    for (
      let tries = 0;
      s.uniqueItems === true && seen.has(JSON.stringify(value)) && tries < 20;
      tries++
    )
      value = generate(itemSchema, ctx, depth + 1);
    if (s.uniqueItems === true && seen.has(JSON.stringify(value)) && out.length >= min) break;
    seen.add(JSON.stringify(value));
    out.push(value);
  }
  return out;
}

function objectFor(s: Schema, ctx: Context, depth: number): Record<string, unknown> {
  const { random } = ctx.source;
  const props = isSchema(s.properties) ? (s.properties as Record<string, unknown>) : {};
  const extra = s.additionalProperties;
  const keys = new Set(Array.isArray(s.required) ? (s.required as string[]) : []);
  for (const key of Object.keys(props)) if (depth < DEEP && random() < 0.5) keys.add(key);
  const minProps = num(s.minProperties) ?? 0;
  for (const key of Object.keys(props)) if (keys.size < minProps) keys.add(key);
  for (let i = 0; keys.size < minProps && extra !== false && i < 50; i++)
    keys.add(`${ctx.source.word()}_${keys.size}`);
  // dependentRequired: a present key brings the keys it depends on (a Set
  // iterator also visits what is added meanwhile, so chains are followed).
  const deps = isSchema(s.dependentRequired) ? s.dependentRequired : {};
  for (const key of keys) for (const d of (deps[key] as string[] | undefined) ?? []) keys.add(d);
  const out: Record<string, unknown> = {};
  for (const key of keys) {
    const sub = key in props ? props[key] : isSchema(extra) ? extra : {};
    out[key] = generate(sub, ctx, depth + 1);
  }
  return out;
}
