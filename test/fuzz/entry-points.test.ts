// Property-based checks of the helpers and building blocks of the public API
// (rewards, progress, messages, recorded responses, zod paths, spans, pages):
// arbitrary arguments, deep and cyclic ones included, either work or fail
// with one of our errors naming the argument; async ones reject, never throw.
import { INVALID_SPAN_CONTEXT, trace } from "@opentelemetry/api";
import fc from "fast-check";
import {
  applyGroupReward,
  applyJudge,
  applyReward,
  InvalidArgumentError,
  judgeGroup,
  LocalFileUploader,
  minMaxRewards,
  PresignedUrlUploader,
  Recorder,
  rankRewards,
  Trajectory,
  TrajectoryGroup,
  WandbArtifactUploader,
  zScores,
} from "trajectory-recorder";
import {
  APIPromise,
  anthropicInputToMessages,
  anthropicOutputToMessages,
  anthropicToolsToChat,
  CursorPage,
  History,
  PendingGroup,
  recordedChoices,
  recordedResponse,
  responsesInputToMessages,
  responsesOutputToMessage,
  responsesToolsToChat,
} from "trajectory-recorder/core";
import { isLoopbackHost, parseApiKeys, startEmulator } from "trajectory-recorder/emulator";
import { InvalidRewardError, JudgeResponseError } from "trajectory-recorder/errors";
import { formatZodPath, zodIssuesToValidationItems } from "trajectory-recorder/wire";
import { afterAll, beforeAll, expect, it } from "vitest";
import { recordGradientStepEvent, withTrainingSpan } from "../../src/telemetry/index.js";
import { defaultSftUploader, manifestDigest } from "../../src/training/index.js";
import {
  createProgressBar,
  formatProgress,
  messagesAndChoicesToJson,
  toChatMessage,
  toChatMessages,
} from "../../src/trajectory/index.js";
import { anything, type Call, call, check, expectNoSecret, SECRET } from "./helpers.js";

/** What the engine says when code trips over a bad value instead of checking it. */
const ENGINE_ERROR =
  /Cannot read prop|is not a function|is not iterable|Cannot convert|Do not know how to serialize|Maximum call stack|Cannot use 'in'|Invalid (count|string length|array length)|Cannot destructure/;

let deep: unknown = "x";
for (let i = 0; i < 10_000; i++) deep = { n: deep };
let deepArray: unknown = [];
for (let i = 0; i < 10_000; i++) deepArray = [deepArray];
const cyclic: Record<string, unknown> = { role: "user", content: SECRET };
cyclic.self = cyclic;

const engineBreakers = [
  Symbol("s"),
  () => 1,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  -1,
  2n ** 70n,
  deep,
  deepArray,
  { content: deep },
];
/** Every kind of value, plus the ones that broke the engine before: deep, cyclic, BigInt, secret. */
const hostile = fc.oneof(
  anything,
  fc.constantFrom(...engineBreakers, SECRET, [SECRET], { apiKey: SECRET }, cyclic, [cyclic]),
);
/** For the values an error may rightly quote (a model name, the judge's own answer). */
const hostileQuoted = fc.oneof(anything, fc.constantFrom(...engineBreakers));
const maybe = <T>(a: fc.Arbitrary<T>) => fc.oneof(a, hostile);

const message = fc.record(
  { role: maybe(fc.constantFrom("user", "assistant", "tool")), content: maybe(fc.string()) },
  { requiredKeys: [] },
);
/** Messages content blocks of every kind the conversion reads, with hostile fields. */
const anthropicBlock = fc.record(
  {
    type: maybe(
      fc.constantFrom(
        "text",
        "image",
        "thinking",
        "tool_use",
        "tool_result",
        "server_tool_use",
        "web_search_tool_result",
        "document",
      ),
    ),
    text: maybe(fc.string()),
    thinking: maybe(fc.string()),
    id: maybe(fc.constantFrom("t1", "t2")),
    tool_use_id: maybe(fc.constantFrom("t1", "t2")),
    name: maybe(fc.string()),
    input: hostile,
    content: hostile,
    source: hostile,
  },
  { requiredKeys: [] },
);
const anthropicMessage = fc.record(
  {
    role: maybe(fc.constantFrom("user", "assistant")),
    content: maybe(fc.oneof(fc.string(), fc.array(anthropicBlock, { maxLength: 4 }))),
  },
  { requiredKeys: [] },
);
const choice = fc.record(
  {
    index: maybe(fc.nat(3)),
    finish_reason: maybe(fc.constantFrom("stop", "length")),
    logprobs: maybe(fc.constant(null)),
    message: maybe(
      fc.record(
        {
          role: fc.constant("assistant"),
          content: maybe(fc.string()),
          tool_calls: maybe(fc.constant([])),
        },
        { requiredKeys: [] },
      ),
    ),
  },
  { requiredKeys: [] },
);
const items = maybe(fc.array(fc.oneof(message, choice, hostile), { maxLength: 4 }));
const scores = maybe(fc.array(maybe(fc.double()), { maxLength: 6 }));
/** A real group (so the helpers get past their argument checks), or anything at all. */
const group = maybe(
  fc
    .array(fc.record({ messages: fc.array(message, { maxLength: 3 }), metadata: hostile }), {
      minLength: 1,
      maxLength: 3,
    })
    .map(
      (ts) =>
        new TrajectoryGroup(
          ts.map((t) => {
            const trajectory = new Trajectory({ messages_and_choices: [] });
            // Fields set afterwards, as a user's code may: only a send checks them.
            trajectory.messages_and_choices = t.messages as never;
            trajectory.metadata = t.metadata as never;
            return trajectory;
          }),
        ),
    ),
);
const judgeOptions = maybe(
  fc.record(
    {
      client: maybe(
        fc.oneof(hostileQuoted, fc.string()).map((answer) => ({
          chat: {
            completions: { create: async () => ({ choices: [{ message: { content: answer } }] }) },
          },
        })),
      ),
      model: fc.oneof(fc.string(), hostileQuoted),
      rubric: maybe(fc.string()),
      requestOptions: hostile,
    },
    { requiredKeys: [] },
  ),
);
// Not fc.func: it hashes its arguments through fc.stringify, which a deep trajectory overflows.
const rewardFn = maybe(
  fc.array(hostile, { minLength: 1, maxLength: 3 }).map((values) => {
    let n = 0;
    const reward = () => values[n++ % values.length];
    return Object.assign(reward, { [fc.toStringMethod]: () => `() => ${fc.stringify(values)}` });
  }),
);
const span = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

/** An error of ours, naming the argument or field, holding no secret. */
function expectOurs(error: unknown) {
  expectNoSecret(error);
  const e = error as Error;
  expect(e.message).not.toMatch(ENGINE_ERROR);
  if (e instanceof InvalidArgumentError) {
    // "call(args): argument.path: expected ..., received (its kind)."
    expect(e.message).toContain(`: ${e.argument}: `);
    expect(e.message).toMatch(/: expected .+\.$/);
    return;
  }
  if (e instanceof InvalidRewardError || e instanceof JudgeResponseError) {
    expect(e.message).toMatch(/expected|unusable/);
    return;
  }
  throw new Error(`not one of our errors: ${String(e?.name)}: ${String(e?.message)}`);
}

const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);
beforeAll(() => {
  process.on("unhandledRejection", onUnhandled);
});
afterAll(async () => {
  // A rejection is reported as unhandled a turn after it happens.
  await new Promise((resolve) => setImmediate(resolve));
  process.off("unhandledRejection", onUnhandled);
  expect(unhandled).toEqual([]);
});

it("answers arbitrary arguments to the synchronous helpers with a result or one of our errors", async () => {
  const calls: fc.Arbitrary<Call>[] = [
    call("rankRewards", fc.tuple(scores), (s) => rankRewards(s as never)),
    call("zScores", fc.tuple(scores), (s) => zScores(s as never)),
    call("minMaxRewards", fc.tuple(scores), (s) => minMaxRewards(s as never)),
    call(
      "formatProgress",
      fc.tuple(
        maybe(
          fc.record({
            done: maybe(fc.integer()),
            total: maybe(fc.integer()),
            exceptions: maybe(fc.nat()),
            rewardMean: maybe(fc.oneof(fc.double(), fc.constant(null))),
          }),
        ),
        maybe(
          fc.record(
            { label: maybe(fc.string()), width: maybe(fc.integer({ min: -5, max: 2000 })) },
            { requiredKeys: [] },
          ),
        ),
      ),
      (p, o) => formatProgress(p as never, o as never),
    ),
    call("createProgressBar", fc.tuple(maybe(fc.string()), hostile, hostile), (label, stream, p) =>
      createProgressBar(label as never, stream as never).update(p as never),
    ),
    call("toChatMessage", fc.tuple(fc.oneof(message, choice, hostile)), (i) =>
      toChatMessage(i as never),
    ),
    call("toChatMessages", fc.tuple(items), (i) => toChatMessages(i as never)),
    call("messagesAndChoicesToJson", fc.tuple(items), (i) => messagesAndChoicesToJson(i as never)),
    call(
      "recordedChoices",
      fc.tuple(
        maybe(
          fc.record(
            { choices: maybe(fc.array(choice, { maxLength: 2 })), prompt_token_ids: hostile },
            { requiredKeys: [] },
          ),
        ),
      ),
      (res) => recordedChoices(res as never),
    ),
    call("recordedResponse", fc.tuple(hostile), (res) => recordedResponse(res as never)),
    call(
      "responsesInputToMessages",
      fc.tuple(
        maybe(
          fc.record(
            {
              instructions: maybe(fc.string()),
              input: maybe(fc.array(fc.oneof(message, hostile), { maxLength: 4 })),
            },
            { requiredKeys: [] },
          ),
        ),
      ),
      (body) => responsesInputToMessages(body as never),
    ),
    call(
      "responsesOutputToMessage",
      fc.tuple(maybe(fc.array(fc.oneof(message, hostile), { maxLength: 4 }))),
      (output) => responsesOutputToMessage(output),
    ),
    call("responsesToolsToChat", fc.tuple(maybe(fc.array(hostile, { maxLength: 3 }))), (tools) =>
      responsesToolsToChat(tools),
    ),
    call(
      "anthropicInputToMessages",
      fc.tuple(
        maybe(
          fc.record(
            {
              system: maybe(fc.oneof(fc.string(), fc.array(anthropicBlock, { maxLength: 2 }))),
              messages: maybe(fc.array(fc.oneof(anthropicMessage, hostile), { maxLength: 4 })),
            },
            { requiredKeys: [] },
          ),
        ),
        maybe(fc.record({ reasoning: maybe(fc.constantFrom("field", "text", "drop")) })),
      ),
      (body, options) => anthropicInputToMessages(body as never, options as never),
    ),
    call(
      "anthropicOutputToMessages",
      fc.tuple(maybe(fc.array(fc.oneof(anthropicBlock, hostile), { maxLength: 4 }))),
      (content) => anthropicOutputToMessages(content),
    ),
    call("anthropicToolsToChat", fc.tuple(maybe(fc.array(hostile, { maxLength: 3 }))), (tools) =>
      anthropicToolsToChat(tools),
    ),
    call(
      "recordGradientStepEvent",
      fc.tuple(fc.oneof(fc.constant(span), hostile), hostile, hostile),
      (s, i, m) => recordGradientStepEvent(s as never, i as never, m as never),
    ),
    call(
      "formatZodPath",
      fc.tuple(maybe(fc.array(maybe(fc.oneof(fc.string(), fc.nat())), { maxLength: 4 }))),
      (p) => formatZodPath(p as never),
    ),
    call(
      "zodIssuesToValidationItems",
      fc.tuple(
        maybe(
          fc.record({
            issues: maybe(
              fc.array(
                maybe(
                  fc.record({
                    path: maybe(fc.array(fc.string())),
                    message: maybe(fc.string()),
                    code: fc.string(),
                  }),
                ),
                { maxLength: 2 },
              ),
            ),
          }),
        ),
        maybe(fc.constantFrom("body", "query", "path")),
      ),
      (e, l) => zodIssuesToValidationItems(e as never, l as never),
    ),
    call("new APIPromise", fc.tuple(hostile), (raw) => new APIPromise(raw as never)),
    call(
      "new CursorPage",
      fc.tuple(
        maybe(
          fc.record(
            {
              data: maybe(fc.array(maybe(fc.record({ id: maybe(fc.string()) })), { maxLength: 2 })),
              has_more: hostile,
              first_id: hostile,
            },
            { requiredKeys: ["data"] },
          ),
        ),
        hostile,
      ),
      (body, f) => new CursorPage(body as never, f as never),
    ),
    call(
      "new History",
      fc.tuple(
        maybe(fc.record({ messages_and_choices: items, tools: hostile }, { requiredKeys: [] })),
      ),
      (init) => JSON.stringify(new History(init as never)),
    ),
    call(
      "new Trajectory + toJSON",
      fc.tuple(
        maybe(
          fc.record(
            { messages_and_choices: items, metadata: hostile, reward: hostile, tools: hostile },
            { requiredKeys: [] },
          ),
        ),
      ),
      (init) => JSON.stringify(new Trajectory(init as never)),
    ),
    call("new Recorder + wrap", fc.tuple(hostile, hostile), (o, client) =>
      new Recorder(o as never).wrap(client as never),
    ),
    call("isLoopbackHost", fc.tuple(maybe(fc.string())), (h) => isLoopbackHost(h as never)),
    call("parseApiKeys", fc.tuple(maybe(fc.string()), hostile), (t, s) =>
      parseApiKeys(t as never, s as never),
    ),
    call("manifestDigest", fc.tuple(maybe(fc.dictionary(fc.string(), maybe(fc.string())))), (c) =>
      manifestDigest(c as never),
    ),
    call("new LocalFileUploader", fc.tuple(hostile), (d) => new LocalFileUploader(d as never)),
    call(
      "new PresignedUrlUploader",
      fc.tuple(hostile),
      (o) => new PresignedUrlUploader(o as never),
    ),
    call(
      "new WandbArtifactUploader",
      fc.tuple(
        maybe(
          fc.record(
            {
              apiKey: maybe(fc.constant(SECRET)),
              baseUrl: maybe(fc.oneof(fc.webUrl(), fc.string())),
            },
            { requiredKeys: [] },
          ),
        ),
      ),
      (o) => new WandbArtifactUploader(o as never),
    ),
    call("defaultSftUploader", fc.tuple(hostile), (c) => defaultSftUploader(c as never)),
    call(
      "new PendingGroup",
      fc.tuple(hostile, hostile),
      (r, o) => new PendingGroup(r as never, o as never),
    ),
    call("TrajectoryGroup.from", fc.tuple(hostile, hostile), (r, o) =>
      TrajectoryGroup.from(r as never, o as never),
    ),
    call(
      "new TrajectoryGroup + toJSON",
      fc.tuple(
        fc.oneof(fc.constant([]), hostile),
        maybe(
          fc.record(
            { metadata: hostile, exceptions: hostile, logs: hostile },
            { requiredKeys: [] },
          ),
        ),
      ),
      (i, o) => JSON.stringify(new TrajectoryGroup(i as never, o as never)),
    ),
  ];
  await check(
    fc.oneof(...calls),
    async (make) => {
      try {
        make();
      } catch (error) {
        expectOurs(error);
      }
    },
    600,
  );
});

it("answers arbitrary arguments to the async helpers by resolving or rejecting with one of our errors", async () => {
  const calls: fc.Arbitrary<Call>[] = [
    call("applyReward", fc.tuple(group, rewardFn), (g, r) => applyReward(g as never, r as never)),
    call("applyGroupReward", fc.tuple(group, rewardFn), (g, r) =>
      applyGroupReward(g as never, r as never),
    ),
    call("judgeGroup", fc.tuple(group, judgeOptions), (g, o) => judgeGroup(g as never, o as never)),
    call("applyJudge", fc.tuple(group, judgeOptions), (g, o) => applyJudge(g as never, o as never)),
    call("recorder.rollout", fc.tuple(maybe(fc.constant(() => undefined)), hostile), (fn, opts) =>
      new Recorder().rollout(fn as never, opts as never),
    ),
    // Whatever starts is closed again: an object of unknown keys is valid options.
    call("startEmulator", fc.tuple(hostile), (o) =>
      startEmulator(o as never).then((emulator) => emulator.close()),
    ),
    call(
      "withTrainingSpan",
      fc.tuple(maybe(fc.string()), hostile, maybe(fc.constant(async () => 1))),
      (n, a, f) => withTrainingSpan(n as never, a as never, f as never),
    ),
  ];
  await check(
    fc.oneof(...calls),
    async (make) => {
      let promise: unknown;
      expect(() => {
        promise = make();
      }).not.toThrow();
      try {
        await promise;
      } catch (error) {
        expectOurs(error);
      }
    },
    400,
  );
});
