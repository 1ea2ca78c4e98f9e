// POST /v1/messages on the emulator: Anthropic's Messages shapes from the
// policy (a message, or its event stream in Anthropic's order), tool_use
// blocks, tool_choice as on the chat endpoint, the key as `x-api-key` or a
// bearer token, errors in Anthropic's `{type: "error", error}` shape.
import { type Emulator, startEmulator } from "trajectory-recorder/emulator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

let emu: Emulator;
beforeAll(async () => {
  emu = await startEmulator({ port: 0, apiKeys: ["k"] });
});
afterAll(async () => {
  await emu.close();
});

const addTool = {
  name: "add",
  description: "Adds two numbers",
  input_schema: {
    type: "object",
    properties: { a: { type: "number" }, b: { type: "number" } },
    required: ["a", "b"],
  },
};

function post(body: unknown, headers: Record<string, string> = { "x-api-key": "k" }) {
  return fetch(`${emu.url}/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", "anthropic-version": "2023-06-01", ...headers },
    body: JSON.stringify(body),
  });
}

const base = { model: "toy", max_tokens: 24, messages: [{ role: "user", content: "Hello" }] };

describe("POST /v1/messages", () => {
  it("answers a message with text content, a stop reason and usage", async () => {
    const res = await post({ ...base, system: "Be brief.", temperature: 0 });
    expect(res.status).toBe(200);
    const m = await res.json();
    expect(m).toMatchObject({ type: "message", role: "assistant", model: "toy" });
    expect(m.id).toMatch(/^msg_/);
    expect(m.content[0].type).toBe("text");
    expect(typeof m.content[0].text).toBe("string");
    expect(["end_turn", "max_tokens"]).toContain(m.stop_reason);
    expect(m.usage.input_tokens).toBeGreaterThan(0);
    expect(m.usage.output_tokens).toBeGreaterThan(0);
  });

  it("forces a tool_use block with tool_choice {type: tool}, its input an object of the schema", async () => {
    const res = await post({
      ...base,
      tools: [addTool],
      tool_choice: { type: "tool", name: "add" },
    });
    const m = await res.json();
    expect(m.stop_reason).toBe("tool_use");
    const use = m.content.find((b: { type: string }) => b.type === "tool_use");
    expect(use).toMatchObject({ type: "tool_use", name: "add" });
    expect(use.id).toMatch(/^toolu_/);
    expect(typeof use.input.a).toBe("number");
    expect(typeof use.input.b).toBe("number");
  });

  it("never calls a tool with tool_choice none, and calls one with any", async () => {
    const none = await (
      await post({ ...base, tools: [addTool], tool_choice: { type: "none" } })
    ).json();
    expect(none.content.every((b: { type: string }) => b.type === "text")).toBe(true);
    const any = await (
      await post({ ...base, tools: [addTool], tool_choice: { type: "any" } })
    ).json();
    expect(any.stop_reason).toBe("tool_use");
  });

  it("streams Anthropic's event sequence, the deltas adding up to the block", async () => {
    const res = await post({
      ...base,
      stream: true,
      tools: [addTool],
      tool_choice: { type: "tool", name: "add" },
    });
    expect(res.headers.get("content-type")).toMatch(/text\/event-stream/);
    const text = await res.text();
    const events = text
      .trim()
      .split("\n\n")
      .map((chunk) => {
        const [eventLine, dataLine] = chunk.split("\n");
        const data = JSON.parse(String(dataLine).slice("data: ".length));
        expect(eventLine).toBe(`event: ${data.type}`);
        return data;
      });
    const types = events.map((e) => e.type).filter((t) => t !== "ping");
    expect(types[0]).toBe("message_start");
    expect(types.slice(-2)).toEqual(["message_delta", "message_stop"]);
    expect(events[0].message.content).toEqual([]);
    const start = events.find(
      (e) => e.type === "content_block_start" && e.content_block.type === "tool_use",
    );
    expect(start.content_block.input).toEqual({});
    const json = events
      .filter((e) => e.type === "content_block_delta" && e.index === start.index)
      .map((e) => e.delta.partial_json)
      .join("");
    expect(Object.keys(JSON.parse(json)).sort()).toEqual(["a", "b"]);
    expect(events.some((e) => e.type === "content_block_stop" && e.index === start.index)).toBe(
      true,
    );
    expect(events.at(-2).delta.stop_reason).toBe("tool_use");
  });

  it("takes the key as a bearer token too, and refuses a wrong or missing key in Anthropic's shape", async () => {
    expect((await post(base, { authorization: "Bearer k" })).status).toBe(200);
    const wrong = await post(base, { "x-api-key": "nope" });
    expect(wrong.status).toBe(401);
    expect(await wrong.json()).toMatchObject({
      type: "error",
      error: { type: "authentication_error" },
    });
    expect((await post(base, {})).status).toBe(401);
  });

  it("refuses what the API refuses, naming the field", async () => {
    const noTools = await post({ ...base, tool_choice: { type: "any" } });
    expect(noTools.status).toBe(400);
    expect(await noTools.json()).toMatchObject({
      type: "error",
      error: { type: "invalid_request_error", message: expect.stringMatching(/tool_choice/) },
    });
    const unknown = await post({
      ...base,
      tools: [addTool],
      tool_choice: { type: "tool", name: "x" },
    });
    expect((await unknown.json()).error.message).toMatch(/tool_choice/);
    const noMax = await post({ model: "toy", messages: [] });
    expect(noMax.status).toBe(400);
    expect((await noMax.json()).error.message).toMatch(/max_tokens/);
  });
});
