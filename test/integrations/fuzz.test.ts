// Property-based checks of the framework subpaths' entry points with
// arbitrary arguments: a result or an InvalidArgumentError naming the
// argument, never the engine's own TypeError; no secret in any message.
import fc from "fast-check";
import { InvalidArgumentError } from "trajectory-recorder";
import { recorderMiddleware, recordMastraAgent } from "trajectory-recorder/ai-sdk";
import { chatOpenAIFields, toOpenAIMessages } from "trajectory-recorder/langchain";
import {
  attachRecorder,
  recordingModelProvider,
  recordingRunner,
} from "trajectory-recorder/openai-agents";
import { expect, it } from "vitest";
import { anything, call, check, expectNoSecret, SECRET } from "../fuzz/helpers.js";

const ENGINE_ERROR =
  /Cannot read prop|is not a function|is not iterable|Cannot convert|Do not know how to serialize|Maximum call stack|Cannot use 'in'|Cannot destructure/;

let deep: unknown = "x";
for (let i = 0; i < 10_000; i++) deep = { n: deep };
const cyclic: Record<string, unknown> = { apiKey: SECRET };
cyclic.self = cyclic;
const hostile = fc.oneof(
  anything,
  fc.constantFrom(Symbol("s"), () => 1, Number.NaN, 2n ** 70n, SECRET, deep, cyclic, [cyclic]),
);
const maybe = <T>(a: fc.Arbitrary<T>) => fc.oneof(a, hostile);

it("answers arbitrary arguments to the framework entry points with a result or an InvalidArgumentError naming them", async () => {
  const calls = [
    call(
      "recordingModelProvider",
      fc.tuple(
        maybe(
          fc.record(
            { client: hostile, recorder: hostile, defaultModel: hostile },
            { requiredKeys: [] },
          ),
        ),
      ),
      (o) => recordingModelProvider(o as never),
    ),
    call("recordingRunner", fc.tuple(hostile), (o) => recordingRunner(o as never)),
    call("attachRecorder", fc.tuple(hostile), (t) => attachRecorder(t as never)),
    call("recordMastraAgent", fc.tuple(hostile), (a) => recordMastraAgent(a as never)),
    call(
      "recorderMiddleware",
      fc.tuple(maybe(fc.record({ registerTelemetry: fc.constant(false) }))),
      (o) => recorderMiddleware(o as never),
    ),
    call(
      "chatOpenAIFields",
      fc.tuple(maybe(fc.record({ modelKwargs: hostile }, { requiredKeys: [] })), hostile),
      (f, o) => chatOpenAIFields(f as never, o as never),
    ),
    call(
      "toOpenAIMessages",
      fc.tuple(maybe(fc.array(hostile, { maxLength: 3 })), hostile),
      (m, model) => toOpenAIMessages(m as never, model as never),
    ),
  ];
  await check(
    fc.oneof(...calls),
    async (make) => {
      try {
        make();
      } catch (error) {
        expectNoSecret(error);
        expect(error).toBeInstanceOf(InvalidArgumentError);
        const e = error as InvalidArgumentError;
        expect(e.message).not.toMatch(ENGINE_ERROR);
        expect(e.message).toContain(`: ${e.argument}: expected `);
      }
    },
    300,
  );
});
