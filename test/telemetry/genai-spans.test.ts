import { AsyncLocalStorage } from "node:async_hooks";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import {
  type Context,
  type ContextManager,
  context,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
} from "@opentelemetry/api";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import OpenAI from "openai";
import { currentRollout, Recorder } from "trajectory-recorder";
import { afterAll, beforeAll, expect, it } from "vitest";

/** A tiny AsyncLocalStorage context manager (context-async-hooks is not installed). */
class AlsContextManager implements ContextManager {
  #als = new AsyncLocalStorage<Context>();
  active(): Context {
    return this.#als.getStore() ?? ROOT_CONTEXT;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    ctx: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    return this.#als.run(ctx, () => fn.apply(thisArg, args));
  }
  bind<T>(_ctx: Context, target: T): T {
    return target;
  }
  enable(): this {
    return this;
  }
  disable(): this {
    return this;
  }
}

const exporter = new InMemorySpanExporter();
let server: Server;
let baseURL: string;

beforeAll(async () => {
  context.setGlobalContextManager(new AlsContextManager());
  trace.setGlobalTracerProvider(
    new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }),
  );
  server = createServer((req, res) => {
    let raw = "";
    req.on("data", (d) => (raw += d));
    req.on("end", () => {
      const body = JSON.parse(raw);
      if (body.messages[0].content === "fail") {
        res.writeHead(500, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { message: "boom" } }));
        return;
      }
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          id: "cmpl-9",
          object: "chat.completion",
          created: 1,
          model: "served-model",
          choices: [
            {
              index: 0,
              finish_reason: "stop",
              logprobs: null,
              message: { role: "assistant", content: "ok" },
            },
          ],
          usage: { prompt_tokens: 11, completion_tokens: 4, total_tokens: 15 },
        }),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(async () => {
  trace.disable();
  context.disable();
  await new Promise<void>((r) => server.close(() => r()));
});

it("emits a rollout span with the reward and a nested GenAI chat span; content only on opt-in; errors marked", async () => {
  const recorder = new Recorder();
  const openai = recorder.wrap(new OpenAI({ apiKey: "k", baseURL, maxRetries: 0 }));
  await recorder.rollout(async (t) => {
    await openai.chat.completions.create({
      model: "m1",
      messages: [{ role: "user", content: "secret" }],
      temperature: 0.5,
    });
    t.reward = 0.75;
  });
  const spans = exporter.getFinishedSpans();
  const rollout = spans.find((s) => s.name === "rollout")!;
  const chat = spans.find((s) => s.name === "chat m1")!;
  expect(spans.filter((s) => s.name.startsWith("chat"))).toHaveLength(1);
  expect(chat.parentSpanContext?.spanId).toBe(rollout.spanContext().spanId);
  expect(chat.kind).toBe(SpanKind.CLIENT);
  const port = Number(new URL(baseURL).port);
  expect(chat.attributes["gen_ai.request.choice.count"]).toBeUndefined();
  expect(chat.attributes).toMatchObject({
    "server.address": "127.0.0.1",
    "server.port": port,
    "gen_ai.operation.name": "chat",
    "gen_ai.provider.name": "openai",
    "gen_ai.request.model": "m1",
    "gen_ai.request.temperature": 0.5,
    "gen_ai.response.model": "served-model",
    "gen_ai.response.id": "cmpl-9",
    "gen_ai.usage.input_tokens": 11,
    "gen_ai.usage.output_tokens": 4,
    "gen_ai.response.finish_reasons": ["stop"],
  });
  expect(JSON.stringify(chat.attributes)).not.toContain("secret");
  const ev = rollout.events.find((e) => e.name === "gen_ai.evaluation.result")!;
  expect(ev.attributes?.["gen_ai.evaluation.score.value"]).toBe(0.75);

  exporter.reset();
  const withContent = new Recorder({ recordContent: true });
  await expect(
    withContent.rollout(async () => {
      await openai.chat.completions.create({
        model: "m1",
        messages: [{ role: "user", content: "fail" }],
        n: 2,
      });
    }),
  ).rejects.toBeInstanceOf(OpenAI.InternalServerError);
  const failed = exporter.getFinishedSpans();
  const failedChat = failed.find((s) => s.name === "chat m1")!;
  expect(failedChat.status.code).toBe(SpanStatusCode.ERROR);
  expect(failedChat.attributes["gen_ai.request.choice.count"]).toBe(2);
  expect(String(failedChat.attributes["gen_ai.input.messages"])).toContain("fail");
  expect(failed.find((s) => s.name === "rollout")!.status.code).toBe(SpanStatusCode.ERROR);
});

it("gives a call that a framework plugin records the same chat span, from the call's start time", async () => {
  exporter.reset();
  const startTime = Date.now() - 250;
  await new Recorder().rollout(async () => {
    currentRollout()!.recordCompletion({
      request: { model: "m2", messages: [{ role: "user", content: "hi" }], temperature: 0.2 },
      choices: [
        {
          index: 0,
          finish_reason: "stop",
          logprobs: null,
          message: { role: "assistant", content: "ok", refusal: null },
        },
      ],
      response: { id: "cmpl-p", model: "served", usage: undefined },
      status: "complete",
      startTime,
    });
  });
  const spans = exporter.getFinishedSpans();
  const rollout = spans.find((s) => s.name === "rollout")!;
  const chats = spans.filter((s) => s.name === "chat m2");
  expect(chats).toHaveLength(1);
  const chat = chats[0]!;
  expect(chat.parentSpanContext?.spanId).toBe(rollout.spanContext().spanId);
  expect(chat.kind).toBe(SpanKind.CLIENT);
  expect(chat.attributes).toMatchObject({
    "gen_ai.operation.name": "chat",
    "gen_ai.request.model": "m2",
    "gen_ai.request.temperature": 0.2,
    "gen_ai.response.id": "cmpl-p",
    "gen_ai.response.finish_reasons": ["stop"],
  });
  const startedMs = chat.startTime[0] * 1000 + chat.startTime[1] / 1e6;
  expect(Math.abs(startedMs - startTime)).toBeLessThan(5);
});
