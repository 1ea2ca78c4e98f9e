// The formula of a `multi` grader (`calculate_output`), parsed by a small
// recursive-descent parser into a tree and evaluated over the sub-graders'
// scores. Only numbers, grader names, + - * / ^, parentheses and a fixed set
// of functions exist: nothing the formula says can reach JavaScript.

type Node =
  | { kind: "number"; value: number }
  | { kind: "name"; name: string }
  | { kind: "unary"; op: "-" | "+"; arg: Node }
  | { kind: "binary"; op: "+" | "-" | "*" | "/" | "^"; left: Node; right: Node }
  | { kind: "call"; fn: string; args: Node[] };

const FUNCTIONS: Record<string, { arity: [number, number]; run: (...a: number[]) => number }> = {
  min: { arity: [1, Number.POSITIVE_INFINITY], run: Math.min },
  max: { arity: [1, Number.POSITIVE_INFINITY], run: Math.max },
  abs: { arity: [1, 1], run: Math.abs },
  floor: { arity: [1, 1], run: Math.floor },
  ceil: { arity: [1, 1], run: Math.ceil },
  exp: { arity: [1, 1], run: Math.exp },
  sqrt: { arity: [1, 1], run: Math.sqrt },
  log: { arity: [1, 1], run: Math.log },
};

/** A parsed formula: its names, and how to compute it from their values. */
export interface Formula {
  names: Set<string>;
  evaluate(values: Record<string, number>): number;
}

const TOKEN =
  /\s*(?:(\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)|([A-Za-z_][A-Za-z0-9_]*)|([-+*/^(),]))/y;

/** Parses `source`; throws an Error saying where it stops making sense. */
export function parseFormula(source: string): Formula {
  const tokens = tokenize(source);
  let at = 0;
  const peek = () => tokens[at]?.text;
  const fail = (what: string): never => {
    const t = tokens[at];
    throw new Error(`${what} at ${t ? `"${t.text}" (character ${t.pos + 1})` : "the end"}`);
  };
  const expect = (text: string) => (peek() === text ? at++ : fail(`expected "${text}"`));

  function sum(): Node {
    let left = product();
    while (peek() === "+" || peek() === "-") {
      const op = tokens[at++]?.text as "+" | "-";
      left = { kind: "binary", op, left, right: product() };
    }
    return left;
  }
  function product(): Node {
    let left = unary();
    while (peek() === "*" || peek() === "/") {
      const op = tokens[at++]?.text as "*" | "/";
      left = { kind: "binary", op, left, right: unary() };
    }
    return left;
  }
  function unary(): Node {
    if (peek() === "-" || peek() === "+") {
      const op = tokens[at++]?.text as "-" | "+";
      return { kind: "unary", op, arg: unary() };
    }
    return power();
  }
  // Right-associative and tighter than a leading minus: -2^2 is -4, 2^3^2 is 512.
  function power(): Node {
    const base = primary();
    if (peek() !== "^") return base;
    at++;
    return { kind: "binary", op: "^", left: base, right: unary() };
  }
  function primary(): Node {
    const t = tokens[at];
    if (!t) return fail("expected a number, a grader name or (");
    if (t.kind === "number") {
      at++;
      return { kind: "number", value: Number(t.text) };
    }
    if (t.text === "(") {
      at++;
      const inner = sum();
      expect(")");
      return inner;
    }
    if (t.kind !== "name") return fail("expected a number, a grader name or (");
    at++;
    if (peek() !== "(") return { kind: "name", name: t.text };
    // Own keys only: `constructor(1)` must not find Object.prototype's.
    const fn = Object.hasOwn(FUNCTIONS, t.text) ? FUNCTIONS[t.text] : undefined;
    if (!fn) {
      at--;
      return fail(`unknown function (known: ${Object.keys(FUNCTIONS).join(", ")})`);
    }
    at++;
    const args = peek() === ")" ? [] : [sum()];
    while (peek() === ",") {
      at++;
      args.push(sum());
    }
    expect(")");
    if (args.length < fn.arity[0] || args.length > fn.arity[1])
      throw new Error(
        `${t.text}() takes ${fn.arity[0] === fn.arity[1] ? fn.arity[0] : `at least ${fn.arity[0]}`} argument(s), got ${args.length}`,
      );
    return { kind: "call", fn: t.text, args };
  }

  const tree = sum();
  if (at < tokens.length) fail("unexpected");
  const names = new Set<string>();
  collectNames(tree, names);
  return { names, evaluate: (values) => evaluate(tree, values) };
}

function tokenize(source: string): { kind: "number" | "name" | "op"; text: string; pos: number }[] {
  const out: { kind: "number" | "name" | "op"; text: string; pos: number }[] = [];
  TOKEN.lastIndex = 0;
  let pos = 0;
  while (pos < source.length) {
    if (/^\s*$/.test(source.slice(pos))) break;
    TOKEN.lastIndex = pos;
    const m = TOKEN.exec(source);
    if (!m) {
      const bad = source.slice(pos).trimStart()[0];
      throw new Error(
        `unexpected character "${bad}" at character ${source.length - source.slice(pos).trimStart().length + 1}`,
      );
    }
    const text = (m[1] ?? m[2] ?? m[3]) as string;
    out.push({
      kind: m[1] ? "number" : m[2] ? "name" : "op",
      text,
      pos: TOKEN.lastIndex - text.length,
    });
    pos = TOKEN.lastIndex;
  }
  return out;
}

function collectNames(node: Node, into: Set<string>): void {
  if (node.kind === "name") into.add(node.name);
  else if (node.kind === "unary") collectNames(node.arg, into);
  else if (node.kind === "binary") {
    collectNames(node.left, into);
    collectNames(node.right, into);
  } else if (node.kind === "call") for (const a of node.args) collectNames(a, into);
}

function evaluate(node: Node, values: Record<string, number>): number {
  switch (node.kind) {
    case "number":
      return node.value;
    case "name": {
      const v = values[node.name];
      if (v === undefined) throw new Error(`no value for ${node.name}`);
      return v;
    }
    case "unary":
      return node.op === "-" ? -evaluate(node.arg, values) : evaluate(node.arg, values);
    case "call":
      return (FUNCTIONS[node.fn] as (typeof FUNCTIONS)[string]).run(
        ...node.args.map((a) => evaluate(a, values)),
      );
    case "binary": {
      const l = evaluate(node.left, values);
      const r = evaluate(node.right, values);
      if (node.op === "+") return l + r;
      if (node.op === "-") return l - r;
      if (node.op === "*") return l * r;
      if (node.op === "/") return l / r;
      return l ** r;
    }
  }
}
