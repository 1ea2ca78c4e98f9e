// Strings that match a JSON Schema `pattern`, for generated tool arguments.
// Covers the usual subset (literals, classes, escapes, groups, alternation,
// quantifiers, anchors); anything else (look-arounds, back-references) makes
// `stringMatching` give up and return undefined.

type Node =
  | { kind: "chars"; pool: string[] }
  | { kind: "seq"; items: Node[] }
  | { kind: "alt"; options: Node[] }
  | { kind: "repeat"; node: Node; min: number; max: number };

const range = (from: string, to: string) =>
  Array.from({ length: to.charCodeAt(0) - from.charCodeAt(0) + 1 }, (_, i) =>
    String.fromCharCode(from.charCodeAt(0) + i),
  );
const DIGITS = range("0", "9");
const WORD = [...range("a", "z"), ...range("A", "Z"), ...DIGITS, "_"];
const SPACE = [" "];
const PRINTABLE = range(" ", "~");
/** How many extra repetitions `*`, `+` and `{n,}` may add. */
const OPEN_REPEAT = 3;

class Unsupported extends Error {}

class Parser {
  private i = 0;
  constructor(private readonly src: string) {}

  parse(): Node {
    const node = this.alternation();
    if (this.i < this.src.length) throw new Unsupported(`stray ${this.src[this.i]}`);
    return node;
  }

  private alternation(): Node {
    const options = [this.sequence()];
    while (this.src[this.i] === "|") {
      this.i++;
      options.push(this.sequence());
    }
    return options.length === 1 ? (options[0] as Node) : { kind: "alt", options };
  }

  private sequence(): Node {
    const items: Node[] = [];
    while (this.i < this.src.length && this.src[this.i] !== "|" && this.src[this.i] !== ")") {
      const c = this.src[this.i] as string;
      if (c === "^" || c === "$") {
        // Anchors: the whole generated string is the match, so they hold.
        this.i++;
        continue;
      }
      items.push(this.quantified(this.atom()));
    }
    return { kind: "seq", items };
  }

  private atom(): Node {
    const c = this.src[this.i++] as string;
    if (c === "(") {
      if (this.src[this.i] === "?") {
        if (this.src[this.i + 1] !== ":") throw new Unsupported("look-around or named group");
        this.i += 2;
      }
      const inner = this.alternation();
      if (this.src[this.i++] !== ")") throw new Unsupported("unclosed group");
      return inner;
    }
    if (c === "[") return this.charClass();
    if (c === ".") return { kind: "chars", pool: WORD };
    if (c === "\\") return { kind: "chars", pool: this.escape() };
    if ("*+?{".includes(c)) throw new Unsupported("quantifier without an atom");
    return { kind: "chars", pool: [c] };
  }

  private escape(): string[] {
    const c = this.src[this.i++];
    switch (c) {
      case "d":
        return DIGITS;
      case "w":
        return WORD;
      case "s":
        return SPACE;
      case "D":
      case "W":
      case "S": {
        const not = new Set(c === "D" ? DIGITS : c === "W" ? WORD : [" ", "\t"]);
        return PRINTABLE.filter((x) => !not.has(x));
      }
      case "n":
        return ["\n"];
      case "t":
        return ["\t"];
      case undefined:
        throw new Unsupported("trailing backslash");
      default:
        if (/[0-9bBkpPux]/.test(c)) throw new Unsupported(`escape \\${c}`);
        return [c];
    }
  }

  private charClass(): Node {
    let negate = false;
    if (this.src[this.i] === "^") {
      negate = true;
      this.i++;
    }
    const members = new Set<string>();
    let first = true;
    while (this.i < this.src.length && (this.src[this.i] !== "]" || first)) {
      first = false;
      let from: string[];
      if (this.src[this.i] === "\\") {
        this.i++;
        from = this.escape();
      } else from = [this.src[this.i++] as string];
      if (
        from.length === 1 &&
        this.src[this.i] === "-" &&
        this.src[this.i + 1] !== "]" &&
        this.i + 1 < this.src.length
      ) {
        this.i++;
        let to = this.src[this.i++] as string;
        if (to === "\\") to = (this.escape()[0] as string) ?? to;
        for (const x of range(from[0] as string, to)) members.add(x);
      } else for (const x of from) members.add(x);
    }
    if (this.src[this.i++] !== "]") throw new Unsupported("unclosed class");
    const pool = negate ? PRINTABLE.filter((x) => !members.has(x)) : [...members];
    if (pool.length === 0) throw new Unsupported("empty class");
    return { kind: "chars", pool };
  }

  private quantified(node: Node): Node {
    const c = this.src[this.i];
    let min: number;
    let max: number;
    if (c === "*" || c === "+" || c === "?") {
      this.i++;
      min = c === "+" ? 1 : 0;
      max = c === "?" ? 1 : min + OPEN_REPEAT;
    } else if (c === "{") {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(this.src.slice(this.i));
      if (!m) return node;
      this.i += m[0].length;
      min = Number(m[1]);
      max = m[2] === undefined ? min : m[3] ? Number(m[3]) : min + OPEN_REPEAT;
    } else return node;
    if (this.src[this.i] === "?") this.i++; // a lazy quantifier generates the same strings
    return { kind: "repeat", node, min, max };
  }
}

function emit(node: Node, random: () => number): string {
  const pick = <T>(xs: T[]) => xs[Math.floor(random() * xs.length)] as T;
  switch (node.kind) {
    case "chars":
      return pick(node.pool);
    case "seq":
      return node.items.map((n) => emit(n, random)).join("");
    case "alt":
      return emit(pick(node.options), random);
    case "repeat": {
      const count = node.min + Math.floor(random() * (node.max - node.min + 1));
      return Array.from({ length: count }, () => emit(node.node, random)).join("");
    }
  }
}

/**
 * A string matching `pattern` (tested with the `u` flag, as JSON Schema
 * validators do) whose length lies in [minLength, maxLength], or undefined when
 * the pattern is outside the supported subset or no try fit.
 */
export function stringMatching(
  pattern: string,
  random: () => number,
  minLength = 0,
  maxLength = Number.POSITIVE_INFINITY,
): string | undefined {
  let re: RegExp;
  let node: Node;
  try {
    re = new RegExp(pattern, "u");
    node = new Parser(pattern).parse();
  } catch {
    return undefined;
  }
  for (let attempt = 0; attempt < 20; attempt++) {
    const s = emit(node, random);
    const length = [...s].length;
    if (length >= minLength && length <= maxLength && re.test(s)) return s;
  }
  return undefined;
}
