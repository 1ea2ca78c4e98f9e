// A Choice whose finish_reason is outside the service's enum (vLLM's "abort",
// a null) is answered 422 by the service: the library refuses it before
// sending by default, naming its path, and the emulator answers 422 as the
// service does, so nothing hides it.
import { TrainableModel, TrainingClient, TrajectoryCheckError } from "trajectory-recorder";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Emulator } from "../../src/emulator/index.js";
import { call, createModel, KEY, start } from "../emulator/helpers.js";
import { trainableGroup } from "../helpers/trainable.js";

let emu: Emulator;
let client: TrainingClient;
beforeAll(async () => {
  emu = await start();
  client = new TrainingClient({ apiKey: KEY, baseURL: emu.url, maxRetries: 0 });
});
afterAll(() => emu.close());

/** A trainable group whose second trajectory's Choice ended with `reason`. */
function groupEndingWith(reason: unknown) {
  const g = trainableGroup(0, 1);
  (g.trajectories[1]!.messages_and_choices[1] as Record<string, unknown>).finish_reason = reason;
  return g;
}

describe("train() and log()", () => {
  for (const reason of ["abort", null]) {
    it(`refuse a Choice with finish_reason ${JSON.stringify(reason)} before sending, naming its path`, async () => {
      const model = await TrainableModel.register(client, {
        project: "p",
        name: `fr-${reason}`,
        baseModel: "t",
      });
      const jobsBefore = (await call(emu, "GET", `/preview/models/${model.id}/checkpoints`)).json;
      const err = await model
        .train([trainableGroup(0, 1), groupEndingWith(reason)], {}, { pollIntervalMs: 10 })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(TrajectoryCheckError);
      const message = (err as Error).message;
      expect(message).toContain(
        "groups[1].trajectories[1].messages_and_choices[1].finish_reason: expected one of stop, length, tool_calls, content_filter, function_call",
      );
      expect(message).toMatch(/refused before sending/);
      expect(message).toMatch(/validate: "drop"/);
      const logged = await model.log([groupEndingWith(reason)]).catch((e: unknown) => e);
      expect(logged).toBeInstanceOf(TrajectoryCheckError);
      // No job was created: the model is still at its first checkpoint.
      expect((await call(emu, "GET", `/preview/models/${model.id}/checkpoints`)).json).toEqual(
        jobsBefore,
      );
    });
  }

  it('with validate: "drop", leave such trajectories out and train on the rest', async () => {
    const model = await TrainableModel.register(client, {
      project: "p",
      name: "fr-drop",
      baseModel: "t",
    });
    const warnings: string[] = [];
    const result = await model.train(
      [trainableGroup(0, 1), groupEndingWith("abort")],
      {},
      {
        pollIntervalMs: 10,
        noSignal: "send",
        validate: { mode: "drop", logger: { warn: (m: string) => warnings.push(m) } },
      },
    );
    expect(result.step).toBeGreaterThan(0);
    expect(warnings.join("\n")).toMatch(/left out 1 trajectories/);
  });
});

describe("the emulator", () => {
  it("answers 422 to a Choice whose finish_reason is outside the enum, as the service does", async () => {
    const m = await createModel(emu, "fr-raw");
    for (const reason of ["abort", null, "eos"]) {
      const r = await call(emu, "POST", "/preview/training-jobs", {
        model_id: m.id,
        trajectory_groups: [trainableGroup(0, 1), groupEndingWith(reason)],
      });
      expect(r.status).toBe(422);
      expect(r.json.detail).toEqual([
        {
          loc: [
            "body",
            "trajectory_groups",
            1,
            "trajectories",
            1,
            "messages_and_choices",
            1,
            "finish_reason",
          ],
          msg: "Input should be 'stop', 'length', 'tool_calls', 'content_filter' or 'function_call'",
          type: "literal_error",
        },
      ]);
      const logged = await call(emu, "POST", `/preview/models/${m.id}/log`, {
        trajectory_groups: [groupEndingWith(reason)],
        split: "val",
      });
      expect(logged.status).toBe(422);
    }
    // In an additional history too.
    const g = trainableGroup(0, 1);
    (g.trajectories[0] as Record<string, unknown>).additional_histories = [
      { messages_and_choices: groupEndingWith("abort").trajectories[1]!.messages_and_choices },
    ];
    const r = await call(emu, "POST", "/preview/training-jobs", {
      model_id: m.id,
      trajectory_groups: [g],
    });
    expect(r.status).toBe(422);
    expect(r.json.detail[0].loc.slice(5)).toEqual([
      "additional_histories",
      0,
      "messages_and_choices",
      1,
      "finish_reason",
    ]);
    // Every value of the enum is taken.
    for (const reason of ["stop", "length", "tool_calls", "content_filter", "function_call"]) {
      const ok = await call(emu, "POST", "/preview/training-jobs", {
        model_id: m.id,
        trajectory_groups: [groupEndingWith(reason)],
      });
      expect(ok.status, reason).toBe(200);
    }
  });
});
