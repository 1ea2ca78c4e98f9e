// A quick yes for the wire writer's schema checks: plain data of the shapes
// the recorder, the workers and the collector write (strings, finite
// numbers, plain objects and arrays) is said valid here without zod, whose
// union of a Choice and six message kinds costs far more per item than the
// few type tests below. Each function answers true only for a value the wire
// schema it stands for (src/wire/trajectory.ts) accepts; for anything else it
// answers false and the caller runs the schema, which names the bad field.
// Accepting less than the schema is allowed, accepting more is not: keep each
// test a subset of its schema when the schemas change. Two tests hold them
// together: test/trajectory/wire-fast.test.ts runs both on chosen values, and
// test/trajectory/wire-fast-property.test.ts on random ones (the same verdict
// on plain data of the usual shapes, never a quick yes the schema refuses).

type Json = Record<string, unknown>;

const proto = Object.prototype;
/** A plain object (as JSON.parse and object literals make) with no toJSON of its own. */
const isPlain = (v: unknown): v is Json => {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return false;
  const p = Object.getPrototypeOf(v);
  return (p === proto || p === null) && !("toJSON" in v);
};
const isArray = (v: unknown): v is unknown[] => Array.isArray(v) && !("toJSON" in v);
const optString = (v: unknown) => v === undefined || typeof v === "string";
const nullishString = (v: unknown) => v === undefined || v === null || typeof v === "string";
const isInt = (v: unknown) => typeof v === "number" && Number.isSafeInteger(v);
// `content`: a string, a list of parts (any), null or absent.
const content = (v: unknown) => nullishString(v) || isArray(v);

function toolCall(v: unknown): boolean {
  if (!isPlain(v) || typeof v.id !== "string" || !optString(v.type)) return false;
  const f = v.function;
  return isPlain(f) && typeof f.name === "string" && typeof f.arguments === "string";
}
const toolCalls = (v: unknown) => isArray(v) && v.every(toolCall);

function tool(v: unknown): boolean {
  if (!isPlain(v) || !optString(v.type)) return false;
  const f = v.function;
  if (!isPlain(f) || typeof f.name !== "string" || f.name.length === 0) return false;
  if (!optString(f.description)) return false;
  if (f.parameters !== undefined && !isPlain(f.parameters)) return false;
  return f.strict === undefined || f.strict === null || typeof f.strict === "boolean";
}
const tools = (v: unknown) => v === undefined || v === null || (isArray(v) && v.every(tool));

/** A message (any of the six roles) or a Choice with no logprobs, as `MessageOrChoiceWireSchema` accepts. */
export function fastItemOk(v: unknown): boolean {
  if (!isPlain(v)) return false;
  if ("message" in v && !("role" in v)) return choice(v);
  if (!content(v.content)) return false;
  switch (v.role) {
    case "system":
    case "developer":
    case "user":
      return optString(v.name);
    case "assistant":
      return (
        optString(v.name) &&
        nullishString(v.refusal) &&
        (v.tool_calls === undefined || toolCalls(v.tool_calls))
      );
    case "tool":
      return typeof v.tool_call_id === "string";
    case "function":
      return typeof v.name === "string";
    default:
      return false;
  }
}

// A Choice whose logprobs are null or absent (the writer checks logprobs by hand).
function choice(v: Json): boolean {
  if (!(v.finish_reason === null || typeof v.finish_reason === "string")) return false;
  if (!isInt(v.index) || !(v.logprobs === undefined || v.logprobs === null)) return false;
  const m = v.message;
  if (!isPlain(m) || m.role !== "assistant") return false;
  if (!nullishString(m.content) || !nullishString(m.refusal)) return false;
  return m.tool_calls === undefined || m.tool_calls === null || toolCalls(m.tool_calls);
}

const metrics = (v: unknown) =>
  v === undefined ||
  (isPlain(v) &&
    Object.values(v).every(
      (x) => (typeof x === "number" && Number.isFinite(x)) || typeof x === "boolean",
    ));
const record = (v: unknown) => v === undefined || isPlain(v);
const logs = (v: unknown) =>
  v === undefined || (isArray(v) && v.every((x) => typeof x === "string"));
const version = (v: unknown) => v === undefined || v === null || isInt(v);

/**
 * A trajectory's own fields, its conversations' items left out (empty lists,
 * as the writer checks them), as `TrajectoryWireSchema` accepts.
 */
export function fastTrajectoryShellOk(v: unknown): boolean {
  if (!isPlain(v)) return false;
  if (
    !(
      v.messages_and_choices === undefined ||
      (isArray(v.messages_and_choices) && v.messages_and_choices.length === 0)
    )
  )
    return false;
  const h = v.additional_histories;
  if (h !== undefined && !(isArray(h) && h.every(history))) return false;
  return (
    tools(v.tools) &&
    (v.reward === undefined || (typeof v.reward === "number" && Number.isFinite(v.reward))) &&
    version(v.initial_policy_version) &&
    version(v.final_policy_version) &&
    metrics(v.metrics) &&
    record(v.metadata) &&
    logs(v.logs) &&
    optString(v.start_time)
  );
}

// A history with its items left out: `{ messages_and_choices: [], tools? }`.
function history(v: unknown): boolean {
  return (
    isPlain(v) &&
    isArray(v.messages_and_choices) &&
    v.messages_and_choices.length === 0 &&
    tools(v.tools)
  );
}

function exception(v: unknown): boolean {
  return (
    isPlain(v) &&
    typeof v.type === "string" &&
    typeof v.message === "string" &&
    optString(v.traceback)
  );
}

/** A group's own fields, its trajectories left out (an empty list), as `TrajectoryGroupWireSchema` accepts. */
export function fastGroupShellOk(v: unknown): boolean {
  if (!isPlain(v) || !isArray(v.trajectories) || v.trajectories.length !== 0) return false;
  const e = v.exceptions;
  return (
    (e === undefined || (isArray(e) && e.every(exception))) &&
    record(v.metadata) &&
    metrics(v.metrics) &&
    logs(v.logs)
  );
}
