// Responses API calls of the trainable model's own client: the empty model
// is filled with the model's name, an empty answer is still the model's turn,
// and the recorder says once that such turns are messages, not Choices.
import OpenAI from "openai";
import { Recorder, TrainableModel, TrainingClient } from "trajectory-recorder";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Emulator, startEmulator } from "../../src/emulator/index.js";
import { type ResponsesServer, startResponsesServer } from "../helpers/responses-server.js";

let emu: Emulator;
let server: ResponsesServer;
beforeAll(async () => {
  emu = await startEmulator({ port: 0 });
  server = await startResponsesServer({
    answer: () => ({
      output: [
        {
          type: "message",
          id: "msg_1",
          role: "assistant",
          status: "completed",
          content: [{ type: "output_text", text: "", annotations: [] }],
        },
      ],
    }),
  });
});
afterAll(async () => {
  await emu.close();
  await server.close();
});

describe("the trainable model's Responses API calls", () => {
  it("fill the empty model with the model's name and note once that the turns are messages", async () => {
    const client = new TrainingClient({ apiKey: "local", baseURL: emu.url, maxRetries: 0 });
    const model = await TrainableModel.register(client, {
      project: "responses",
      name: "student",
      baseModel: "emulator/tiny",
    });
    const recorder = new Recorder();
    const openai = model.openai({ recorder });
    const t = await recorder.rollout(async () => {
      const first = await openai.responses.create({ model: "", input: "say red" });
      expect(first.model).toBe(model.inferenceName());
      await openai.responses.create({ model: "", input: "say cat" });
      // Another model through the same client is a teacher: no note for it.
      await openai.responses.create({ model: "teacher-large", input: "say dog" });
    });
    // Three conversations: the first is the main history, the others additional ones.
    expect(t.messages().map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(t.additional_histories).toHaveLength(2);
    const notes = t.logs.filter((l) => l.includes("is the policy being trained"));
    expect(notes).toHaveLength(1);
    expect(notes[0]).toContain(model.inferenceName());
  });

  it("records an answer of empty text as the model's (empty) turn", async () => {
    const recorder = new Recorder();
    const openai = recorder.wrap(new OpenAI({ baseURL: server.baseURL, apiKey: "k" }));
    const t = await recorder.rollout(async () => {
      await openai.responses.create({ model: "gpt-x", input: "anything?" });
    });
    expect(t.messages()).toEqual([
      { role: "user", content: "anything?" },
      { role: "assistant", content: "" },
    ]);
    // Without a policy named, every model is the policy: a teacher's trace, no note.
    expect(t.logs).toEqual([]);
  });
});
