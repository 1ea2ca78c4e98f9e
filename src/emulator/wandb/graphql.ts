// What the W&B surfaces share: the GraphQL error an operation answers with,
// the caller a key names, and the routing of a GraphQL document to the
// operation it asks for, by the fields it selects rather than by which words
// its text happens to contain.
import type { IncomingMessage } from "node:http";

/** Variables of a GraphQL request, as the client sent them. */
export type Vars = Record<string, any>;

/** An answer of `{ errors: [{ message }] }` with HTTP 200, as W&B gives for a refused operation. */
export class GraphqlError extends Error {}

/** Who calls: the key's entity, or any entity when the emulator takes any key. */
export interface Caller {
  entity: string;
  anyEntity: boolean;
}

/** The caller an HTTP Basic (`api:<key>`) or Bearer key names, or undefined. */
export function callerOf(
  req: IncomingMessage,
  keys: Map<string, string> | undefined,
): Caller | undefined {
  const header = req.headers.authorization ?? "";
  const basic = /^Basic\s+(.+)$/i.exec(header);
  const bearer = /^Bearer\s+(.+)$/i.exec(header);
  const key = basic
    ? Buffer.from(basic[1] as string, "base64")
        .toString("utf8")
        .replace(/^[^:]*:/, "")
    : bearer?.[1]?.trim();
  if (!key) return undefined;
  if (!keys) return { entity: "local", anyEntity: true };
  const entity = keys.get(key);
  return entity ? { entity, anyEntity: false } : undefined;
}

/** The entity an operation acts for: the one it names, which must be the caller's. */
export function entityFor(caller: Caller, entity: unknown): string {
  const wanted = typeof entity === "string" && entity !== "" ? entity : caller.entity;
  if (!caller.anyEntity && wanted !== caller.entity) {
    throw new GraphqlError(`This API key belongs to entity ${caller.entity}, not ${wanted}.`);
  }
  return wanted;
}

/** A field an operation selects at its root, and the fields it selects inside that one. */
export interface RootField {
  name: string;
  inner: string[];
}

const TOKEN = /\.\.\.|[{}()[\]:=@$!,|&]|[_A-Za-z][_0-9A-Za-z]*|-?\d[\d.eE+-]*/g;

/** The names and punctuation of a document, without strings and comments. */
function tokens(query: string): string[] {
  const bare = query
    .replace(/"""[\s\S]*?"""/g, " ")
    .replace(/"(?:[^"\\\n]|\\.)*"/g, " ")
    .replace(/#[^\n]*/g, " ");
  return bare.match(TOKEN) ?? [];
}

/**
 * The root fields of the document's first operation (fragment definitions,
 * wherever they stand, are passed over), by their names rather than their
 * aliases.
 */
export function rootFields(query: string): RootField[] {
  const t = tokens(query);
  let i = 0;
  // Past a balanced group opened at t[i] (`(` or `{` or `[`).
  const skipGroup = () => {
    const open = t[i];
    const close = open === "(" ? ")" : open === "[" ? "]" : "}";
    let depth = 0;
    do {
      if (t[i] === open) depth += 1;
      else if (t[i] === close) depth -= 1;
      i += 1;
    } while (depth > 0 && i < t.length);
  };
  const skipDirectives = () => {
    while (t[i] === "@") {
      i += 2;
      if (t[i] === "(") skipGroup();
    }
  };
  // The fields of the selection set opening at t[i], each with what it selects inside.
  const selection = (depth: number): RootField[] => {
    const fields: RootField[] = [];
    i += 1;
    while (i < t.length && t[i] !== "}") {
      if (t[i] === "...") {
        i += 1;
        if (t[i] === "on") i += 2;
        else if (t[i] !== "{" && t[i] !== "@") i += 1;
        skipDirectives();
        if (t[i] === "{") skipGroup();
        continue;
      }
      let name = t[i] as string;
      i += 1;
      if (t[i] === ":") {
        name = t[i + 1] as string;
        i += 2;
      }
      if (t[i] === "(") skipGroup();
      skipDirectives();
      let inner: string[] = [];
      if (t[i] === "{") {
        if (depth === 0) inner = selection(1).map((f) => f.name);
        else skipGroup();
      }
      fields.push({ name, inner });
    }
    i += 1;
    return fields;
  };
  while (i < t.length) {
    if (t[i] === "fragment") {
      while (i < t.length && t[i] !== "{") i += 1;
      skipGroup();
      continue;
    }
    if (t[i] !== "{") {
      // `query Name($v: T = default) @directive`, up to its selection set.
      i += 1;
      while (i < t.length && t[i] !== "{") {
        if (t[i] === "(") skipGroup();
        else i += 1;
      }
      continue;
    }
    return selection(0);
  }
  return [];
}
