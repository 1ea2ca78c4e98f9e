// A body the recorder refuses (a BigInt in a field) inside a rollout: every
// SDK helper built on create() rejects with the recorder's error through the
// promise it chains on, nothing is sent, and nothing is left unhandled.
import { setImmediate as nextTurn } from "node:timers/promises";
import OpenAI from "openai";
import { InvalidArgumentError, Recorder } from "trajectory-recorder";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

const major = Number(process.env.OPENAI_MAJOR ?? "6");
const messages = [{ role: "user" as const, content: "hello" }];
// A field the recorder checks before anything is sent: a BigInt is not JSON.
const body = { model: "m", messages, metadata: { n: 1n } } as never;
const tool = {
  type: "function" as const,
  function: {
    name: "noop",
    parameters: { type: "object", properties: {} },
    function: () => "ok",
  },
};

type Helpers = {
  parse: (b: unknown) => Promise<unknown>;
  stream: (b: unknown) => { finalChatCompletion: () => Promise<unknown> };
  runTools: (b: unknown) => { finalChatCompletion: () => Promise<unknown> };
};
/** Where each major keeps the helpers: openai 4 under `beta`. */
function helpers(client: OpenAI): Helpers {
  const c = client as unknown as {
    chat: { completions: Partial<Helpers> };
    beta: { chat: { completions: Helpers } };
  };
  return major === 4 ? c.beta.chat.completions : (c.chat.completions as Helpers);
}

const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);
beforeEach(() => {
  unhandled.length = 0;
  process.on("unhandledRejection", onUnhandled);
});
afterEach(() => {
  process.off("unhandledRejection", onUnhandled);
});

describe("a refused body inside a rollout", () => {
  const recorder = new Recorder();
  const sent: unknown[] = [];
  const client = () =>
    recorder.wrap(
      new OpenAI({
        apiKey: "k",
        baseURL: "http://127.0.0.1:9/v1",
        maxRetries: 0,
        fetch: (async (...args: unknown[]) => {
          sent.push(args);
          throw new Error("nothing should be sent");
        }) as never,
      }),
    );
  // The stream and tool runners turn any error into the SDK's OpenAIError
  // with its message (unwrapped too): the field is still named.
  const refusal = (name: string, e: unknown) =>
    (name === "stream" || name === "runTools" || e instanceof InvalidArgumentError) &&
    /body\.metadata\.n: expected a JSON value/.test((e as Error).message);

  const cases: Record<string, (c: OpenAI) => Promise<unknown>> = {
    create: (c) => c.chat.completions.create(body),
    "create().withResponse()": (c) => c.chat.completions.create(body).withResponse(),
    "create().asResponse()": (c) => c.chat.completions.create(body).asResponse(),
    parse: (c) => helpers(c).parse(body),
    "parse().withResponse()": (c) =>
      (
        helpers(c).parse(body) as unknown as { withResponse: () => Promise<unknown> }
      ).withResponse(),
    stream: (c) => helpers(c).stream(body).finalChatCompletion(),
    runTools: (c) =>
      helpers(c)
        .runTools({ ...(body as object), tools: [tool] })
        .finalChatCompletion(),
  };
  for (const [name, call] of Object.entries(cases))
    it(`${name} rejects with the recorder's error, sends nothing, leaves nothing unhandled`, async () => {
      sent.length = 0;
      let error: unknown;
      const t = await recorder.rollout(async () => {
        try {
          await call(client());
        } catch (e) {
          error = e;
        }
      });
      for (let i = 0; i < 5; i++) await nextTurn();
      expect(refusal(name, error), String(error)).toBe(true);
      expect(sent).toEqual([]);
      expect(unhandled).toEqual([]);
      expect(t.logs.join("\n")).not.toMatch(/had not finished/);
    });
});
