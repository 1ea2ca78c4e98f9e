import { once } from "node:events";
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { streamText, wrapLanguageModel } from "ai";
import { Recorder } from "trajectory-recorder";
import { recorderMiddleware } from "trajectory-recorder/ai-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// A Chat Completions server that streams one chunk, then holds the stream
// open until the test lets it finish: the stream outlives the rollout.
let server: Server;
let url: string;
const held: ServerResponse[] = [];
let arrived: () => void = () => {};

function chunk(delta: Record<string, unknown>, finish: string | null = null) {
  const choice = { index: 0, delta, logprobs: null, finish_reason: finish };
  return `data: ${JSON.stringify({ id: "chatcmpl-late", object: "chat.completion.chunk", created: 0, model: "m", choices: [choice] })}\n\n`;
}

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(chunk({ role: "assistant", content: "Hel" }));
      held.push(res);
      arrived();
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(() => {
  for (const res of held) res.end();
  server.close();
});

function release(): void {
  for (const res of held.splice(0)) {
    res.write(chunk({ content: "lo" }, "stop"));
    res.end("data: [DONE]\n\n");
  }
}

describe("an AI SDK stream that finishes after the rollout returned", () => {
  it("is recorded as far as it got, with a line in the logs, and the late end changes nothing", async () => {
    const provider = createOpenAICompatible({ name: "late", baseURL: url, apiKey: "k" });
    const model = wrapLanguageModel({ model: provider("m"), middleware: recorderMiddleware() });
    let result: ReturnType<typeof streamText> | undefined;
    const t = await new Recorder().rollout(async () => {
      const request = new Promise<void>((resolve) => {
        arrived = resolve;
      });
      result = streamText({ model, prompt: "say hello" });
      // The caller reads the first text and returns without waiting for the end.
      for await (const text of result.textStream) if (text) break;
      await request;
    });
    const recorded = JSON.stringify(t.toJSON());
    expect(t.messages_and_choices).toEqual([
      { role: "user", content: "say hello" },
      { role: "assistant", content: "Hel" },
    ]);
    expect(t.logs).toEqual([
      expect.stringMatching(
        /chatcmpl-late incomplete: the rollout ended before this stream finished/,
      ),
    ]);
    release();
    await Promise.resolve(result?.consumeStream()).catch(() => {});
    expect(JSON.stringify(t.toJSON())).toBe(recorded);
  });
});
