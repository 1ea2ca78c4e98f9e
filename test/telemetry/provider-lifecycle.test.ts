import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { trace } from "@opentelemetry/api";
import {
  AlwaysOffSampler,
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import OpenAI from "openai";
import { Recorder } from "trajectory-recorder";
import { afterAll, beforeAll, expect, it } from "vitest";

let server: Server;
let baseURL: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          id: "c",
          object: "chat.completion",
          created: 1,
          model: "m",
          choices: [
            {
              index: 0,
              finish_reason: "stop",
              logprobs: null,
              message: { role: "assistant", content: "ok" },
            },
          ],
        }),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(async () => {
  trace.disable();
  await new Promise<void>((r) => server.close(() => r()));
});

const register = (exporter: InMemorySpanExporter, sampler?: AlwaysOffSampler) =>
  trace.setGlobalTracerProvider(
    new BasicTracerProvider({ sampler, spanProcessors: [new SimpleSpanProcessor(exporter)] }),
  );

it("traces from the first rollout after a provider is registered, and follows a provider replaced after trace.disable()", async () => {
  const recorder = new Recorder();
  const openai = recorder.wrap(new OpenAI({ apiKey: "k", baseURL }));
  const run = () =>
    recorder.rollout(() =>
      openai.chat.completions.create({ model: "m", messages: [{ role: "user", content: "hi" }] }),
    );

  // Nobody traces yet: the rollout is recorded all the same.
  expect((await run()).messages_and_choices).toHaveLength(2);

  const first = new InMemorySpanExporter();
  register(first);
  expect((await run()).messages_and_choices).toHaveLength(2);
  expect(first.getFinishedSpans().map((s) => s.name)).toEqual(["chat m", "rollout"]);

  trace.disable();
  const second = new InMemorySpanExporter();
  register(second);
  await run();
  expect(second.getFinishedSpans().map((s) => s.name)).toEqual(["chat m", "rollout"]);
  expect(first.getFinishedSpans()).toHaveLength(2);

  // A sampler that drops every span: nothing is exported, nothing breaks.
  trace.disable();
  const dropped = new InMemorySpanExporter();
  register(dropped, new AlwaysOffSampler());
  expect((await run()).messages_and_choices).toHaveLength(2);
  expect(dropped.getFinishedSpans()).toHaveLength(0);
});
