// A group's wire JSON written piece by piece, checked as it is written: the
// same text as `JSON.stringify(group)`, without the deep copy `toJSON()`
// makes of every logprob token, and in pieces small enough that a caller can
// give the event loop a turn between them. The recorded logprobs, the bulk of
// a group, are checked by hand while they are written; everything else (a
// few small objects per turn) goes through the wire schemas.
import type { z } from "zod";
import {
  ALTERNATIVE_KEYS,
  BYTES_EXPECTED,
  CompactLogprobs,
  isLogprob,
  isTokenBytes,
  isTokenText,
  LOGPROB_EXPECTED,
  LOGPROBS_KEYS,
  TOKEN_KEYS,
  TOKEN_TEXT_EXPECTED,
} from "../logprobs/index.js";
import {
  MessageOrChoiceWireSchema,
  TrajectoryGroupWireSchema,
  TrajectoryWireSchema,
} from "../wire/index.js";
import { choiceToJson } from "./choice-json.js";
import { groupShell, TrajectoryGroup } from "./group.js";
import { History, historyShell } from "./history.js";
import { isChoice, type MessageOrChoice } from "./messages.js";
import { isRecorded } from "./recorded.js";
import { Trajectory, trajectoryShell } from "./trajectory.js";
import { fastGroupShellOk, fastItemOk, fastTrajectoryShellOk } from "./wire-fast.js";

/** Text, or recorded logprobs already written as UTF-8. */
export type Piece = string | Uint8Array;

/** A problem found while writing, with the path of the bad field. */
export interface WireIssue {
  path: (string | number)[];
  message: string;
}

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * The pieces of a group's wire JSON, in order; problems go to `issues` (the
 * text is then not to be sent). Joined as UTF-8, the pieces are
 * `JSON.stringify(group)`.
 *
 * @example
 * const issues: WireIssue[] = [];
 * const bytes = Buffer.concat([...groupWirePieces(group, issues)].map((p) => Buffer.from(p)));
 */
export function* groupWirePieces(group: unknown, issues: WireIssue[]): Generator<Piece> {
  const shell = shellOf(group);
  if (!isObject(shell) || !Array.isArray(shell.trajectories)) {
    check(TrajectoryGroupWireSchema, jsonOf(shell), [], issues);
    return;
  }
  checkShell(
    TrajectoryGroupWireSchema,
    fastGroupShellOk,
    { ...shell, trajectories: [] },
    [],
    issues,
  );
  yield* objectPieces(shell, (key, value) =>
    key === "trajectories"
      ? arrayPieces(value as unknown[], (t, i) => trajectoryPieces(t, ["trajectories", i], issues))
      : undefined,
  );
}

function* trajectoryPieces(
  value: unknown,
  path: (string | number)[],
  issues: WireIssue[],
): Generator<Piece> {
  const shell = shellOf(value);
  if (!isObject(shell)) {
    check(TrajectoryWireSchema, jsonOf(shell), path, issues);
    yield JSON.stringify(shell) ?? "null";
    return;
  }
  const histories = shell.additional_histories;
  const light = {
    ...shell,
    messages_and_choices: Array.isArray(shell.messages_and_choices)
      ? []
      : shell.messages_and_choices,
    additional_histories: Array.isArray(histories)
      ? histories.map((h) => {
          const s = shellOf(h);
          return isObject(s) && Array.isArray(s.messages_and_choices)
            ? { ...s, messages_and_choices: [] }
            : s;
        })
      : histories,
  };
  checkShell(TrajectoryWireSchema, fastTrajectoryShellOk, light, path, issues);
  yield* objectPieces(shell, (key, v) => {
    if (key === "messages_and_choices" && Array.isArray(v)) {
      return arrayPieces(v, (item, i) => itemPieces(item, [...path, key, i], issues));
    }
    if (key === "additional_histories" && Array.isArray(v)) {
      return arrayPieces(v, (h, i) => historyPieces(h, [...path, key, i]));
    }
    return undefined;
  });

  function* historyPieces(h: unknown, at: (string | number)[]): Generator<Piece> {
    const s = shellOf(h);
    if (!isObject(s)) {
      yield JSON.stringify(s) ?? "null";
      return;
    }
    yield* objectPieces(s, (key, v) =>
      key === "messages_and_choices" && Array.isArray(v)
        ? arrayPieces(v, (item, i) => itemPieces(item, [...at, key, i], issues))
        : undefined,
    );
  }
}

/**
 * Checks a trajectory as {@link groupWirePieces} would before writing it,
 * without writing it: its own fields (reward, metrics, metadata, tools, ...)
 * through the wire schema, and each item of its conversations except those
 * the recorder built (see `recorded.ts`), which were copied from what the SDK
 * sent and received. For a rollout's result, written right after by
 * `JSON.stringify`; the check before training still checks every item.
 *
 * @example
 * const issues: WireIssue[] = [];
 * checkRolloutTrajectory(trajectory, issues);
 */
export function checkRolloutTrajectory(t: Trajectory, issues: WireIssue[]): void {
  const shell = trajectoryShell(t);
  const items = shell.messages_and_choices;
  const histories = shell.additional_histories;
  const light = {
    ...shell,
    messages_and_choices: Array.isArray(items) ? [] : items,
    additional_histories: Array.isArray(histories)
      ? histories.map((h) => {
          const s = shellOf(h);
          return isObject(s) && Array.isArray(s.messages_and_choices)
            ? { ...s, messages_and_choices: [] }
            : s;
        })
      : histories,
  };
  checkShell(TrajectoryWireSchema, fastTrajectoryShellOk, light, [], issues);
  const checkItems = (list: unknown, at: (string | number)[]) => {
    if (!Array.isArray(list)) return;
    for (let i = 0; i < list.length; i++) {
      if (!isRecorded(t, list[i])) itemPieces(list[i], [...at, i], issues);
    }
  };
  checkItems(items, ["messages_and_choices"]);
  if (Array.isArray(histories)) {
    histories.forEach((h, i) => {
      const s = shellOf(h);
      if (isObject(s))
        checkItems(s.messages_and_choices, ["additional_histories", i, "messages_and_choices"]);
    });
  }
}

// In-memory objects give their fields without copies; anything else with a
// toJSON gives its JSON; plain data is itself.
function shellOf(value: unknown): unknown {
  if (value instanceof TrajectoryGroup) return groupShell(value);
  if (value instanceof Trajectory) return trajectoryShell(value);
  if (value instanceof History) return historyShell(value);
  const withToJSON = value as { toJSON?: () => unknown } | null;
  if (withToJSON && typeof withToJSON.toJSON === "function") return withToJSON.toJSON();
  return value;
}

/** Writes an object as JSON.stringify would, letting `special` write some values itself. */
function* objectPieces(
  obj: Json,
  special: (key: string, value: unknown) => Iterable<Piece> | undefined,
): Generator<Piece> {
  let first = true;
  for (const key of Object.keys(obj)) {
    const value = obj[key];
    const own = special(key, value);
    const text = own ? undefined : JSON.stringify(value);
    if (!own && text === undefined) continue;
    yield `${first ? "{" : ","}${JSON.stringify(key)}:`;
    first = false;
    if (own) yield* own;
    else yield text as string;
  }
  yield first ? "{}" : "}";
}

function* arrayPieces(
  items: readonly unknown[],
  each: (item: unknown, index: number) => Iterable<Piece>,
): Generator<Piece> {
  yield "[";
  for (let i = 0; i < items.length; i++) {
    if (i > 0) yield ",";
    yield* each(items[i], i);
  }
  yield "]";
}

function itemPieces(item: unknown, path: (string | number)[], issues: WireIssue[]): Piece[] {
  if (!isObject(item) || !isChoice(item as unknown as MessageOrChoice)) {
    const text = JSON.stringify(item) ?? "null";
    if (!fastItemOk(item)) check(MessageOrChoiceWireSchema, JSON.parse(text), path, issues);
    return [text];
  }
  // The Choice without its logprobs goes through the schema; the logprobs are
  // written (and checked) by hand, in the place `choiceToJson` gives them.
  const logprobs = (item as Json).logprobs;
  const json = choiceToJson({ ...item, logprobs: null } as never);
  const rest = JSON.stringify(json);
  if (!fastItemOk(json)) check(MessageOrChoiceWireSchema, JSON.parse(rest), path, issues);
  if (logprobs === null || logprobs === undefined) return [rest];
  const at = rest.indexOf('"logprobs":null');
  const head = `${rest.slice(0, at)}"logprobs":`;
  const tail = rest.slice(at + 15);
  // Checked when they were made: written from their columns, as bytes.
  const bytes = logprobs instanceof CompactLogprobs ? logprobs.wireBytes() : undefined;
  if (bytes) return [head, bytes, tail];
  return [head, logprobsText(logprobs, [...path, "logprobs"], issues), tail];
}

const LOGPROBS_KEY_SET = new Set(LOGPROBS_KEYS);
const TOKEN_KEY_SET = new Set(TOKEN_KEYS);
const ALTERNATIVE_KEY_SET = new Set(ALTERNATIVE_KEYS);

function logprobsText(value: unknown, path: (string | number)[], issues: WireIssue[]): string {
  // A compact one with a list replaced by the caller: written as data.
  if (value instanceof CompactLogprobs) return logprobsText(value.toJSON(), path, issues);
  if (!isObject(value)) {
    issues.push({ path, message: "expected an object or null" });
    return "null";
  }
  let out = `{"content":${tokensText(value.content, [...path, "content"], issues, true)},"refusal":${tokensText(value.refusal, [...path, "refusal"], issues, true)}`;
  out += extras(value, LOGPROBS_KEY_SET);
  return `${out}}`;
}

function tokensText(
  list: unknown,
  path: (string | number)[],
  issues: WireIssue[],
  withTop: boolean,
): string {
  if (list === null || list === undefined) return "null";
  if (!Array.isArray(list)) {
    issues.push({ path, message: "expected an array or null" });
    return "null";
  }
  const parts: string[] = new Array(list.length);
  for (let i = 0; i < list.length; i++) parts[i] = tokenText(list[i], path, i, issues, withTop);
  return `[${parts.join(",")}]`;
}

function tokenText(
  t: unknown,
  listPath: (string | number)[],
  i: number,
  issues: WireIssue[],
  withTop: boolean,
): string {
  if (!isObject(t)) {
    issues.push({ path: [...listPath, i], message: "expected a token logprob object" });
    return "null";
  }
  const { token, bytes, logprob } = t;
  if (!isTokenText(token))
    issues.push({ path: [...listPath, i, "token"], message: TOKEN_TEXT_EXPECTED });
  if (!isLogprob(logprob))
    issues.push({ path: [...listPath, i, "logprob"], message: LOGPROB_EXPECTED });
  let out = `{"token":${JSON.stringify(token) ?? "null"},"bytes":${bytesText(bytes, [...listPath, i, "bytes"], issues)},"logprob":${JSON.stringify(logprob) ?? "null"}`;
  if (withTop) {
    const top = t.top_logprobs;
    out += `,"top_logprobs":${top === undefined || top === null ? "[]" : tokensText(top, [...listPath, i, "top_logprobs"], issues, false)}`;
  }
  out += extras(t, withTop ? TOKEN_KEY_SET : ALTERNATIVE_KEY_SET);
  return `${out}}`;
}

function bytesText(bytes: unknown, path: (string | number)[], issues: WireIssue[]): string {
  if (bytes === null || bytes === undefined) return "null";
  if (!isTokenBytes(bytes)) {
    issues.push({ path, message: BYTES_EXPECTED });
    return "null";
  }
  return `[${(bytes as number[]).join(",")}]`;
}

/** Keys beyond the known ones, in the order they came, as JSON.stringify writes them. */
function extras(value: Json, known: Set<string>): string {
  let out = "";
  for (const key of Object.keys(value)) {
    if (known.has(key)) continue;
    const text = JSON.stringify(value[key]);
    if (text !== undefined) out += `,${JSON.stringify(key)}:${text}`;
  }
  return out;
}

function jsonOf(value: unknown): unknown {
  const text = JSON.stringify(value);
  return text === undefined ? undefined : JSON.parse(text);
}

/**
 * A group's or a trajectory's own fields (its lists of trajectories or items
 * left empty): written first, so that what JSON cannot write (a BigInt, a
 * cycle) throws here as before; plain data of the usual shapes is taken on
 * the quick test (`wire-fast.ts`), anything else goes through the schema.
 */
function checkShell(
  schema: z.ZodType,
  fast: (value: unknown) => boolean,
  value: Json,
  path: (string | number)[],
  issues: WireIssue[],
): void {
  const text = JSON.stringify(value);
  if (fast(value)) return;
  check(schema, text === undefined ? undefined : JSON.parse(text), path, issues);
}

function check(
  schema: z.ZodType,
  value: unknown,
  path: (string | number)[],
  issues: WireIssue[],
): void {
  const parsed = schema.safeParse(value);
  if (parsed.success) return;
  for (const issue of parsed.error.issues) {
    issues.push({
      path: [...path, ...(issue.path as (string | number)[])],
      message: issue.message,
    });
  }
}
