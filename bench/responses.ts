// What the recorder adds per Responses API call and per Anthropic Messages
// call, beside a chat completion
// measured the same way: an agent loop of TURNS calls against a loopback
// server, raw and recorded calls interleaved (alternating which goes first),
// the figure the median of the paired differences. Responses are converted
// to chat messages as they are recorded (responses-convert.ts, and
// messages-convert.ts for Messages), so their added cost is that conversion
// on top of what chat's recording costs.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { Recorder } from "trajectory-recorder";

const TURNS = 4;
const STREAM_WORDS = 200;

const call = {
  type: "function_call",
  id: "fc_1",
  call_id: "call_1",
  name: "lookup",
  arguments: '{"fruit":"apple"}',
  status: "completed",
};
const message = (text: string) => ({
  type: "message",
  id: "msg_1",
  role: "assistant",
  status: "completed",
  content: [{ type: "output_text", text, annotations: [] }],
});
const response = (output: object[]) => ({
  id: "resp_1",
  object: "response",
  created_at: 1,
  status: "completed",
  model: "m",
  output,
  usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2 },
});
const responseJson = JSON.stringify(response([message("hello")]));
const chatJson = JSON.stringify({
  id: "c",
  object: "chat.completion",
  created: 1,
  model: "m",
  choices: [
    {
      index: 0,
      finish_reason: "stop",
      logprobs: null,
      message: { role: "assistant", content: "hello" },
    },
  ],
  usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
});

/** A streamed response: created, the message added, STREAM_WORDS text deltas, done, completed. */
function responseSse(): string {
  let n = 0;
  const ev = (type: string, fields: object) =>
    `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: n++, ...fields })}\n\n`;
  const at = { item_id: "msg_1", output_index: 0, content_index: 0 };
  const part = { type: "output_text", text: "", annotations: [] };
  const text = Array.from({ length: STREAM_WORDS }, () => "x").join("");
  return [
    ev("response.created", { response: { ...response([]), status: "in_progress" } }),
    ev("response.output_item.added", {
      output_index: 0,
      item: { ...message(""), content: [], status: "in_progress" },
    }),
    ev("response.content_part.added", { ...at, part }),
    ...Array.from({ length: STREAM_WORDS }, () =>
      ev("response.output_text.delta", { ...at, delta: "x" }),
    ),
    ev("response.output_text.done", { ...at, text }),
    ev("response.content_part.done", { ...at, part: { ...part, text } }),
    ev("response.output_item.done", { output_index: 0, item: message(text) }),
    ev("response.completed", { response: response([message(text)]) }),
  ].join("");
}
const sse = responseSse();

const anthropicMessage = (content: object[], stop: string) => ({
  id: "msg_1",
  type: "message",
  role: "assistant",
  model: "m",
  content,
  stop_reason: stop,
  stop_sequence: null,
  usage: { input_tokens: 1, output_tokens: 1 },
});
const anthropicText = JSON.stringify(
  anthropicMessage([{ type: "text", text: "hello" }], "end_turn"),
);
const anthropicTool = JSON.stringify(
  anthropicMessage(
    [{ type: "tool_use", id: "toolu_1", name: "lookup", input: { fruit: "apple" } }],
    "tool_use",
  ),
);

/** A streamed message: start, one text block of STREAM_WORDS deltas, its stop, the delta, the stop. */
function messagesSse(): string {
  const ev = (type: string, fields: object) =>
    `event: ${type}\ndata: ${JSON.stringify({ type, ...fields })}\n\n`;
  return [
    ev("message_start", { message: { ...anthropicMessage([], "end_turn"), stop_reason: null } }),
    ev("content_block_start", { index: 0, content_block: { type: "text", text: "" } }),
    ...Array.from({ length: STREAM_WORDS }, () =>
      ev("content_block_delta", { index: 0, delta: { type: "text_delta", text: "x" } }),
    ),
    ev("content_block_stop", { index: 0 }),
    ev("message_delta", {
      delta: { stop_reason: "end_turn", stop_sequence: null },
      usage: { output_tokens: STREAM_WORDS },
    }),
    ev("message_stop", {}),
  ].join("");
}
const messagesStream = messagesSse();

const now = () => Number(process.hrtime.bigint()) / 1000;
const median = (xs: number[]) =>
  [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)] ?? 0;
const p99 = (xs: number[]) =>
  [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) * 0.99)] ?? 0;
interface Times {
  raw: number[];
  rec: number[];
}

async function interleave(rounds: number, a: () => Promise<void>, b: () => Promise<void>) {
  for (let i = 0; i < rounds; i++) {
    if (i % 2) {
      await a();
      await b();
    } else {
      await b();
      await a();
    }
  }
}

/** An agent loop written against the Responses API: a tool call, its output, the answer, again. */
async function responsesLoop(client: OpenAI, into: number[]): Promise<void> {
  const input: OpenAI.Responses.ResponseInput = [{ role: "user", content: "question" }];
  for (let turn = 0; turn < TURNS; turn++) {
    const t0 = now();
    const res = await client.responses.create({ model: "m", instructions: "be brief", input });
    into.push(now() - t0);
    input.push(...(res.output as OpenAI.Responses.ResponseInputItem[]));
    input.push({ role: "user", content: `question ${turn}` });
  }
}

/** The same loop over chat completions. */
async function chatLoop(client: OpenAI, into: number[]): Promise<void> {
  const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [
    { role: "system", content: "be brief" },
  ];
  for (let turn = 0; turn < TURNS; turn++) {
    messages.push({ role: "user", content: `question ${turn}` });
    const t0 = now();
    const res = await client.chat.completions.create({ model: "m", messages });
    into.push(now() - t0);
    messages.push(res.choices[0]!.message);
  }
}

/** The loop over Anthropic's Messages API: a tool use, its result, the answer, again. */
async function messagesLoop(client: Anthropic, into: number[]): Promise<void> {
  const messages: Anthropic.MessageParam[] = [{ role: "user", content: "question" }];
  for (let turn = 0; turn < TURNS; turn++) {
    const t0 = now();
    const res = await client.messages.create({
      model: "m",
      max_tokens: 64,
      system: "be brief",
      messages,
    });
    into.push(now() - t0);
    messages.push({ role: "assistant", content: res.content });
    const use = res.content.find((b) => b.type === "tool_use");
    messages.push({
      role: "user",
      content: use
        ? [{ type: "tool_result", tool_use_id: use.id, content: "red" }]
        : `question ${turn}`,
    });
  }
}

/** A streamed Messages call read to its end. */
async function messagesStreamed(client: Anthropic, into: number[]): Promise<void> {
  const t0 = now();
  const s = await client.messages.create({
    model: "m",
    max_tokens: 64,
    messages: [{ role: "user", content: "hi" }],
    stream: true,
  });
  for await (const _ of s);
  into.push(now() - t0);
}

/** A streamed Responses call read to its end. */
async function streamed(client: OpenAI, into: number[]): Promise<void> {
  const t0 = now();
  const s = await client.responses.create({ model: "m", input: "hi", stream: true });
  for await (const _ of s);
  into.push(now() - t0);
}

/**
 * The Responses rows: per call in a rollout (plain and with a function call
 * answered), per streamed event, beside chat's per-call figure, each raw vs
 * recorded on the same loopback server.
 *
 * @example
 * console.table(await benchResponses({ calls: 2000, warmup: 3000 }));
 */
export async function benchResponses(
  o: { calls?: number; warmup?: number; streams?: number } = {},
): Promise<Record<string, { value: string }>> {
  const calls = o.calls ?? 2000;
  const warmup = o.warmup ?? 3000;
  const streams = o.streams ?? 400;
  let toolTurn = false;
  const server = createServer((req, res) => {
    let raw = "";
    req.on("data", (d) => (raw += d));
    req.on("end", () => {
      const body = JSON.parse(raw);
      const chat = req.url?.endsWith("/chat/completions");
      if (req.url?.endsWith("/v1/messages")) {
        res.writeHead(200, {
          "content-type": body.stream ? "text/event-stream" : "application/json",
        });
        if (body.stream) return res.end(messagesStream);
        toolTurn = !toolTurn;
        return res.end(toolTurn ? anthropicTool : anthropicText);
      }
      res.writeHead(200, {
        "content-type": body.stream ? "text/event-stream" : "application/json",
      });
      if (chat) return res.end(chatJson);
      if (body.stream) return res.end(sse);
      // Every other answer is a function call, so the loop carries calls and outputs.
      toolTurn = !toolTurn;
      res.end(toolTurn ? JSON.stringify(response([call])) : responseJson);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  const recorder = new Recorder();
  const raw = new OpenAI({ apiKey: "k", baseURL });
  const wrapped = recorder.wrap(new OpenAI({ apiKey: "k", baseURL }));
  const anthropicURL = baseURL.replace(/\/v1$/, "");
  const rawAnthropic = new Anthropic({ apiKey: "k", baseURL: anthropicURL });
  const wrappedAnthropic = recorder.wrap(new Anthropic({ apiKey: "k", baseURL: anthropicURL }));
  const measureWith = async <C>(
    clients: { raw: C; wrapped: C },
    rounds: number,
    loop: (client: C, into: number[]) => Promise<void>,
  ): Promise<Times> => {
    const t: Times = { raw: [], rec: [] };
    await interleave(
      rounds,
      () => loop(clients.raw, t.raw),
      () => recorder.rollout(() => loop(clients.wrapped, t.rec)).then(() => {}),
    );
    return t;
  };
  const measure = (rounds: number, loop: (client: OpenAI, into: number[]) => Promise<void>) =>
    measureWith({ raw, wrapped }, rounds, loop);
  const anthropic = { raw: rawAnthropic, wrapped: wrappedAnthropic };
  try {
    await measure(warmup / TURNS, chatLoop);
    await measure(warmup / TURNS, responsesLoop);
    await measure(Math.ceil(warmup / 10), streamed);
    await measureWith(anthropic, warmup / TURNS, messagesLoop);
    await measureWith(anthropic, Math.ceil(warmup / 10), messagesStreamed);
    const chat = await measure(calls / TURNS, chatLoop);
    const responses = await measure(calls / TURNS, responsesLoop);
    const stream = await measure(streams, streamed);
    const messages = await measureWith(anthropic, calls / TURNS, messagesLoop);
    const messagesStreams = await measureWith(anthropic, streams, messagesStreamed);
    const us = (n: number) => `${n.toFixed(2)} µs`;
    const added = (t: Times, per = 1) =>
      us(median(t.rec.map((r, i) => (r - (t.raw[i] ?? r)) / per)));
    return {
      "chat: per call in a rollout, p50 (added)": { value: added(chat) },
      "responses: per call in a rollout, p50 (added)": { value: added(responses) },
      "responses: per call in a rollout, p99 (added)": {
        value: us(p99(responses.rec) - p99(responses.raw)),
      },
      "responses: per streamed event, p50 (added)": { value: added(stream, STREAM_WORDS + 7) },
      "raw responses call p50 (reference)": { value: us(median(responses.raw)) },
      "messages (Anthropic): per call in a rollout, p50 (added)": { value: added(messages) },
      "messages (Anthropic): per streamed event, p50 (added)": {
        value: added(messagesStreams, STREAM_WORDS + 5),
      },
      "raw messages call p50 (reference)": { value: us(median(messages.raw)) },
    };
  } finally {
    server.close();
  }
}
