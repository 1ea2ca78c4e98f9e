// An `@anthropic-ai/sdk` client wrapped with recorder.wrap records its
// Messages calls inside a rollout (create, streamed or not, and the SDK's
// messages.stream() helper), against the emulator's /v1/messages: a tool
// loop becomes one chat-format history with every tool call paired with its
// result, the teacher's turns plain assistant messages (never Choices), and the
// caller keeps the SDK's own objects.
import Anthropic from "@anthropic-ai/sdk";
import { Recorder, TrajectoryGroup, validateGroup } from "trajectory-recorder";
import { type Emulator, startEmulator } from "trajectory-recorder/emulator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

type Msg = Record<string, unknown> & { role: string };

let emu: Emulator;
let baseURL: string;
beforeAll(async () => {
  emu = await startEmulator({ port: 0, apiKeys: ["k"] });
  // The Anthropic SDKs append /v1/messages to a base URL without /v1.
  baseURL = emu.url.replace(/\/v1$/, "");
});
afterAll(async () => {
  await emu.close();
});

const tools: Anthropic.Tool[] = [
  {
    name: "add",
    description: "Adds two numbers",
    input_schema: {
      type: "object",
      properties: { a: { type: "number" }, b: { type: "number" } },
      required: ["a", "b"],
    },
  },
];
const quiet = { warn() {}, info() {} };

function client(recorder: Recorder) {
  return recorder.wrap(new Anthropic({ apiKey: "k", baseURL, maxRetries: 0 }));
}

const messagesOf = (t: { messages_and_choices: unknown[] }) =>
  t.messages_and_choices as unknown as Msg[];

/** Every assistant tool call has a tool message with its id, and every tool message a call. */
function expectPaired(messages: Msg[]) {
  const calls = messages.flatMap((m) => (m.tool_calls as { id: string }[] | undefined) ?? []);
  const results = messages.filter((m) => m.role === "tool").map((m) => m.tool_call_id);
  expect(calls.length).toBeGreaterThan(0);
  expect(results.sort()).toEqual(calls.map((c) => c.id).sort());
}

describe("recorder.wrap(anthropic)", () => {
  it("records a tool loop as one history, tool calls paired with results, valid as a teacher's group", async () => {
    const recorder = new Recorder({ logger: quiet });
    const anthropic = client(recorder);
    const run = () =>
      recorder.rollout(async () => {
        const messages: Anthropic.MessageParam[] = [{ role: "user", content: "What is 2+3?" }];
        const first = await anthropic.messages.create({
          model: "toy",
          max_tokens: 40,
          system: "Use the tools.",
          messages,
          tools,
          tool_choice: { type: "tool", name: "add" },
        });
        expect(first.stop_reason).toBe("tool_use");
        messages.push({ role: "assistant", content: first.content });
        const results: Anthropic.ToolResultBlockParam[] = [];
        for (const block of first.content)
          if (block.type === "tool_use") {
            const { a, b } = block.input as { a: number; b: number };
            results.push({ type: "tool_result", tool_use_id: block.id, content: String(a + b) });
          }
        messages.push({ role: "user", content: results });
        const last = await anthropic.messages.create({
          model: "toy",
          max_tokens: 20,
          system: "Use the tools.",
          messages,
          tools,
          tool_choice: { type: "none" },
        });
        expect(last.content.every((b) => b.type === "text")).toBe(true);
      });
    const group = new TrajectoryGroup([await run(), await run()]);
    for (const t of group.trajectories) {
      const history = messagesOf(t);
      expect(history.map((m) => m.role)).toEqual([
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
      ]);
      expect(history[0]).toEqual({ role: "system", content: "Use the tools." });
      type Call = { id: string; function: { name: string; arguments: string } };
      const call = ((history[2]?.tool_calls ?? []) as Call[])[0];
      expect(call?.id).toMatch(/^toolu_/);
      expect(call?.function.name).toBe("add");
      const args = JSON.parse(String(call?.function.arguments));
      expect(history[3]).toEqual({
        role: "tool",
        tool_call_id: call?.id,
        content: String(args.a + args.b),
      });
      expectPaired(history);
      // Teacher turns: plain messages, never Choices (no logprobs, no token ids).
      for (const m of history) expect(m).not.toHaveProperty("logprobs");
      expect(t.tools).toEqual([
        {
          type: "function",
          function: {
            name: "add",
            description: "Adds two numbers",
            parameters: tools[0]?.input_schema,
          },
        },
      ]);
    }
    for (const [i, t] of group.trajectories.entries()) t.reward = i;
    const check = validateGroup(group, { requireTrainable: false, mode: "throw" });
    expect(check.problems).toEqual([]);
    expect(check.refused).toBe(false);
    // Without the option, a group of teacher turns (no Choice) is refused.
    expect(() => validateGroup(group)).toThrow();
  });

  it("records a streamed create and keeps the SDK's Stream (tee, controller)", async () => {
    const recorder = new Recorder({ logger: quiet });
    const anthropic = client(recorder);
    let textSeen = "";
    const t = await recorder.rollout(async () => {
      const stream = await anthropic.messages.create({
        model: "toy",
        max_tokens: 16,
        messages: [{ role: "user", content: "Say something." }],
        stream: true,
      });
      expect(stream.controller).toBeInstanceOf(AbortController);
      const [mine, other] = stream.tee();
      for await (const event of mine)
        if (event.type === "content_block_delta" && event.delta.type === "text_delta")
          textSeen += event.delta.text;
      for await (const _ of other);
    });
    const history = messagesOf(t);
    expect(history.at(-1)).toEqual({ role: "assistant", content: textSeen });
  });

  it("records messages.stream(): finalMessage, text events and withResponse keep working", async () => {
    const recorder = new Recorder({ logger: quiet });
    const anthropic = client(recorder);
    let input: unknown;
    const t = await recorder.rollout(async () => {
      const stream = anthropic.messages.stream({
        model: "toy",
        max_tokens: 30,
        messages: [{ role: "user", content: "2+3?" }],
        tools,
        tool_choice: { type: "any" },
      });
      let json = "";
      stream.on("inputJson", (delta) => {
        json += delta;
      });
      const final = await stream.finalMessage();
      const use = final.content.find((b) => b.type === "tool_use");
      input = use?.type === "tool_use" ? use.input : undefined;
      expect(input).toEqual(JSON.parse(json));
      const { response } = await anthropic.messages
        .create({ model: "toy", max_tokens: 5, messages: [{ role: "user", content: "hi" }] })
        .withResponse();
      expect(response.status).toBe(200);
    });
    const history = messagesOf(t);
    const assistant = history.find((m) => m.role === "assistant" && m.tool_calls) as Msg;
    const call = (assistant.tool_calls as { function: { arguments: string } }[])[0];
    expect(JSON.parse(String(call?.function.arguments))).toEqual(input);
    // The second call does not continue the first: it is a history of its own.
    expect(history.filter((m) => m.role === "assistant").length).toBe(1);
    expect(t.additional_histories?.length).toBe(1);
  });

  it("records a stream the caller leaves early as what it had, and leaves calls outside rollouts alone", async () => {
    const recorder = new Recorder({ logger: quiet });
    const anthropic = client(recorder);
    const outside = await anthropic.messages.create({
      model: "toy",
      max_tokens: 5,
      messages: [{ role: "user", content: "hi" }],
    });
    expect(outside.type).toBe("message");
    const t = await recorder.rollout(async () => {
      const stream = await anthropic.messages.create({
        model: "toy",
        max_tokens: 30,
        messages: [{ role: "user", content: "Talk." }],
        tools,
        // A forced call streams its input in three pieces: leaving after two cuts it.
        tool_choice: { type: "tool", name: "add" },
        stream: true,
      });
      // Leaving the loop aborts the request (the SDK's own cleanup). An abort
      // from inside the loop once the whole body has arrived leaves the SDK's
      // iterator waiting (seen on an unwrapped client too), so the test leaves.
      let n = 0;
      for await (const event of stream)
        if (event.type === "content_block_delta" && ++n === 2) break;
      expect(stream.controller.signal.aborted).toBe(true);
    });
    expect(t.logs.join("\n")).not.toMatch(/left out/);
    const last = messagesOf(t).at(-1) as Msg;
    expect(last.role).toBe("assistant");
    // The call as far as it came: its name, the first pieces of its arguments.
    const call = (last.tool_calls as { function: { name: string; arguments: string } }[])[0];
    expect(call?.function.name).toBe("add");
    expect(call?.function.arguments.startsWith("{")).toBe(true);
    expect(() => JSON.parse(String(call?.function.arguments))).toThrow();
  });

  it("refuses a body it could not record, as the SDK refuses one it cannot send, and the caller gets that error", async () => {
    const recorder = new Recorder({ logger: quiet });
    const anthropic = client(recorder);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    await recorder.rollout(async () => {
      await expect(
        anthropic.messages.create({
          model: "toy",
          max_tokens: 5,
          messages: [{ role: "user", content: "hi" }],
          metadata: cyclic as never,
        }),
      ).rejects.toThrow(/body\.metadata/);
    });
  });

  it("leaves a failed call's error to the caller, with its SDK class, and records the failure", async () => {
    const recorder = new Recorder({ logger: quiet });
    const anthropic = recorder.wrap(new Anthropic({ apiKey: "wrong", baseURL, maxRetries: 0 }));
    const t = await recorder.rollout(async () => {
      const error = await anthropic.messages
        .create({ model: "toy", max_tokens: 5, messages: [{ role: "user", content: "hi" }] })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Anthropic.AuthenticationError);
      expect((error as InstanceType<typeof Anthropic.AuthenticationError>).status).toBe(401);
    });
    expect(t.logs.join("\n")).toMatch(/401|authentication|failed/i);
  });

  it("records through clients derived with withOptions, and gives receipts", async () => {
    const recorder = new Recorder({ logger: quiet });
    const anthropic = client(recorder).withOptions({ timeout: 30_000 });
    let receipt: unknown;
    const t = await recorder.rollout(async () => {
      const message = await anthropic.messages.create({
        model: "toy",
        max_tokens: 5,
        messages: [{ role: "user", content: "hi" }],
      });
      receipt = recorder.receiptOf(message);
    });
    expect(messagesOf(t).map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(receipt).toMatchObject({ trajectory_id: t.id, call: 1 });
  });

  it("names and counts what the conversion left out", async () => {
    const recorder = new Recorder({ logger: quiet });
    const anthropic = client(recorder);
    const t = await recorder.rollout(async () => {
      await anthropic.messages.create({
        model: "toy",
        max_tokens: 5,
        messages: [
          {
            role: "user",
            content: [
              { type: "document", source: { type: "text", media_type: "text/plain", data: "x" } },
              { type: "text", text: "Summarise." },
            ],
          },
        ],
      });
    });
    expect(t.metrics.anthropic_items_dropped).toBe(1);
    expect(t.logs.join("\n")).toMatch(/anthropic: document content block has no chat form/);
  });
});
