// The wire writer's quick yes (src/trajectory/wire-fast.ts) against the zod
// schemas it stands in for, on random data: shapes the recorder, workers and
// collector write, each field now and then replaced by a wrong value or left
// out. On JSON data of those shapes (what JSON.parse gives back: the
// collector's and the workers' input) both give the same verdict, so the
// schema is left for what is really wrong; on anything at all, a quick yes is
// never given to what the schema refuses. In between, values that JSON
// rewrites (NaN and Infinity become null, an undefined entry of a record
// disappears) may get a quick no and go to the schema: the quick test takes
// only values that are their own JSON.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  fastGroupShellOk,
  fastItemOk,
  fastTrajectoryShellOk,
} from "../../src/trajectory/wire-fast.js";
import {
  MessageOrChoiceWireSchema,
  TrajectoryGroupWireSchema,
  TrajectoryWireSchema,
} from "../../src/wire/index.js";

/** What the writer hands the schema: the value as its JSON reads back. */
const roundTrip = (v: unknown) => {
  const text = JSON.stringify(v);
  return text === undefined ? undefined : JSON.parse(text);
};
const schemaOk = (schema: { safeParse(v: unknown): { success: boolean } }, v: unknown) =>
  schema.safeParse(roundTrip(v)).success;

const RUNS = { numRuns: 2000 };

// Keys of free-form records. `toJSON` is left out: the quick test refuses any
// object that has one (JSON.stringify would call it), its one intended
// difference from the schema on JSON data.
const key = fc.string({ maxLength: 6 }).filter((k) => k !== "toJSON" && k !== "__proto__");
const str = fc.string({ maxLength: 6 });
const anyJson = fc.jsonValue({ maxDepth: 2 });
const plainRecord = fc.dictionary(key, anyJson, { maxKeys: 3 });

/** Values of the wrong type for most fields (and a few right ones, by chance). */
const wrong = fc.constantFrom<unknown>(
  null,
  undefined,
  0,
  -1,
  1.5,
  2 ** 53,
  -0,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  "",
  "x",
  true,
  [],
  [1],
  {},
  { a: 1 },
);
/** A field's value: usually one the schema takes, sometimes a wrong one. */
const field = <T>(valid: fc.Arbitrary<T>) =>
  fc.oneof(
    { weight: 5, arbitrary: valid as fc.Arbitrary<unknown> },
    { weight: 1, arbitrary: wrong },
  );
/** An object whose every key may be missing. */
const loose = <T extends Record<string, fc.Arbitrary<unknown>>>(model: T) =>
  fc.record(model, { requiredKeys: [] });

const toolCall = loose({
  id: field(str),
  type: field(str),
  function: field(loose({ name: field(str), arguments: field(str) })),
});
const toolCalls = fc.array(field(toolCall), { maxLength: 2 });
const tool = loose({
  type: field(str),
  function: field(
    loose({
      name: field(str),
      description: field(str),
      parameters: field(plainRecord),
      strict: field(fc.option(fc.boolean())),
    }),
  ),
});
const tools = fc.option(fc.array(field(tool), { maxLength: 2 }));
const content = field(fc.option(fc.oneof(str, fc.array(anyJson, { maxLength: 2 }))));

const message = fc.oneof(
  fc.record(
    { role: fc.constantFrom("system", "developer", "user"), content, name: field(str) },
    { requiredKeys: ["role"] },
  ),
  fc.record(
    {
      role: fc.constant("assistant"),
      content,
      name: field(str),
      refusal: field(fc.option(str)),
      tool_calls: field(toolCalls),
      reasoning_content: anyJson,
    },
    { requiredKeys: ["role"] },
  ),
  fc.record(
    { role: fc.constant("tool"), content, tool_call_id: field(str) },
    { requiredKeys: ["role"] },
  ),
  fc.record(
    { role: fc.constant("function"), content, name: field(str) },
    { requiredKeys: ["role"] },
  ),
  fc.record({ role: field(fc.constantFrom("robot", "")), content }, { requiredKeys: ["role"] }),
);

// A Choice as the writer checks it: its logprobs are checked by hand and
// written apart, so here they are always null or absent.
const choice = fc.record(
  {
    finish_reason: field(fc.option(fc.constantFrom("stop", "length", "tool_calls"))),
    index: field(fc.integer({ min: 0, max: 8 })),
    logprobs: fc.constantFrom(null, undefined),
    message: field(
      loose({
        role: field(fc.constant("assistant")),
        content: field(fc.option(str)),
        refusal: field(fc.option(str)),
        tool_calls: field(fc.option(toolCalls)),
      }),
    ),
    token_ids: fc.array(fc.nat(), { maxLength: 3 }),
  },
  { requiredKeys: ["message"] },
);
const item = fc.oneof(message, choice);

const metricValue = fc.oneof(fc.double(), fc.boolean(), wrong);
const version = field(fc.option(fc.integer()));
const logs = field(fc.array(field(str), { maxLength: 2 }));
const history = loose({ messages_and_choices: field(fc.constant([])), tools: field(tools) });
// A trajectory's own fields, its items left out (the writer checks those one by one).
const trajectoryShell = loose({
  messages_and_choices: fc.constant([]),
  tools: field(tools),
  additional_histories: field(fc.array(field(history), { maxLength: 2 })),
  reward: field(fc.double()),
  initial_policy_version: version,
  final_policy_version: version,
  metrics: field(fc.dictionary(key, metricValue, { maxKeys: 3 })),
  metadata: field(plainRecord),
  logs,
  start_time: field(str),
});
const exception = loose({ type: field(str), message: field(str), traceback: field(str) });
// A group's own fields, its trajectories left out.
const groupShell = fc.record(
  {
    trajectories: fc.constant([]),
    exceptions: field(fc.array(field(exception), { maxLength: 2 })),
    metadata: field(plainRecord),
    metrics: field(fc.dictionary(key, metricValue, { maxKeys: 3 })),
    logs,
  },
  { requiredKeys: ["trajectories"] },
);

const cases = [
  { name: "an item", fast: fastItemOk, schema: MessageOrChoiceWireSchema, shapes: item },
  {
    name: "a trajectory's own fields",
    fast: fastTrajectoryShellOk,
    schema: TrajectoryWireSchema,
    shapes: trajectoryShell,
  },
  {
    name: "a group's own fields",
    fast: fastGroupShellOk,
    schema: TrajectoryGroupWireSchema,
    shapes: groupShell,
  },
];

describe.each(cases)("$name: the quick test and the schema", ({ fast, schema, shapes }) => {
  it("give the same verdict on JSON data of the usual shapes, right or wrong", () => {
    fc.assert(
      fc.property(shapes, (shape) => {
        const v = roundTrip(shape);
        expect(fast(v)).toBe(schemaOk(schema, v));
      }),
      RUNS,
    );
  });

  it("never a quick yes for what the schema refuses, whatever the value", () => {
    const anything = fc.oneof(shapes, fc.anything({ withNullPrototype: true, withBigInt: false }));
    fc.assert(
      fc.property(anything, (v) => {
        if (fast(v)) expect(schemaOk(schema, v)).toBe(true);
      }),
      RUNS,
    );
  });
});
