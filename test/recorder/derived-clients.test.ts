// A client derived from a wrapped one (`withOptions`, openai 5 to 7) records as
// the wrapped one does, and keeps model.openai()'s fill-in of an empty
// `model`; and a wrapped create() reports every error through the promise it
// returns, as the SDK does, never by throwing at the call site.
import OpenAI from "openai";
import {
  InvalidArgumentError,
  Recorder,
  TrainableModel,
  TrainingClient,
  type Trajectory,
} from "trajectory-recorder";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Emulator } from "../../src/emulator/index.js";
import { KEY, start } from "../emulator/helpers.js";
import { startVllmServer, type VllmServer } from "../helpers/vllm-server.js";

const major = Number(process.env.OPENAI_MAJOR ?? "6");
let emu: Emulator;
let vllm: VllmServer;
beforeAll(async () => {
  emu = await start();
  vllm = await startVllmServer({ respond: (body) => ({ content: `re: ${body.model}` }) });
});
afterAll(async () => {
  await emu.close();
  await vllm.close();
});

const ask = (content: string) => [{ role: "user" as const, content }];
const assistantTexts = (t: Trajectory) =>
  [t, ...t.additional_histories]
    .flatMap((h) => h.messages_and_choices as Record<string, any>[])
    .map((m) => m.message?.content ?? (m.role === "assistant" ? m.content : undefined))
    .filter((c) => c !== undefined);

describe("a client derived from a wrapped client", () => {
  if (major === 4) {
    it("openai 4 has no withOptions: per-call options are create()'s second argument, and recorded", async () => {
      const recorder = new Recorder();
      const openai = recorder.wrap(new OpenAI({ baseURL: vllm.baseURL, apiKey: "k" }));
      expect((openai as { withOptions?: unknown }).withOptions).toBeUndefined();
      const t = await recorder.rollout(async () => {
        await openai.chat.completions.create(
          { model: "m", messages: ask("hi") },
          { timeout: 5_000, maxRetries: 0 },
        );
      });
      expect(assistantTexts(t)).toEqual(["re: m"]);
    });
    return;
  }

  it("is recorded, and so is a client derived from the derived one", async () => {
    const recorder = new Recorder();
    const openai = recorder.wrap(new OpenAI({ baseURL: vllm.baseURL, apiKey: "k" }));
    const quick = (openai as any).withOptions({ timeout: 5_000 }) as OpenAI;
    const quicker = (quick as any).withOptions({ maxRetries: 0 }) as OpenAI;
    expect(quick).toBeInstanceOf(OpenAI);
    expect(quick).not.toBe(openai);
    expect(quick.timeout).toBe(5_000);
    expect(quicker.maxRetries).toBe(0);
    const t = await recorder.rollout(async () => {
      await openai.chat.completions.create({ model: "a", messages: ask("1") });
      await quick.chat.completions.create({ model: "b", messages: ask("2") });
      await quicker.chat.completions.create({ model: "c", messages: ask("3") });
    });
    expect(assistantTexts(t).sort()).toEqual(["re: a", "re: b", "re: c"]);
    // No "wrap the client" advice: every call was recorded.
    expect(t.logs.join("\n")).not.toMatch(/recorded no chat completion|recorder\.wrap/);
    // Wrapping the derived client again is still a no-op (one record a call).
    const again = recorder.wrap(quick);
    const t2 = await recorder.rollout(async () => {
      await again.chat.completions.create({ model: "d", messages: ask("4") });
    });
    expect(assistantTexts(t2)).toEqual(["re: d"]);
  });

  it("from model.openai({ recorder }) keeps the empty model's fill-in and the policy mark", async () => {
    const client = new TrainingClient({ apiKey: KEY, baseURL: emu.url, maxRetries: 0 });
    const model = await TrainableModel.register(client, {
      project: "p",
      name: "derived",
      baseModel: "toy",
    });
    const recorder = new Recorder();
    const policy = model.openai({ recorder });
    const quick = (policy as any).withOptions({ timeout: 20_000 }) as OpenAI;
    const t = await recorder.rollout(async () => {
      const r = await quick.chat.completions.create({
        model: "",
        messages: ask("say red"),
        max_tokens: 3,
        seed: 7,
      });
      expect(r.model).toBe(model.inferenceName());
    });
    // Recorded as the policy's Choice (with logprobs), not as context.
    const main = t.messages_and_choices as Record<string, any>[];
    expect(main[1]!.message).toBeDefined();
    expect(main[1]!.logprobs.content.length).toBeGreaterThan(0);
    expect(t.logs).toEqual([]);
    // Without a recorder, the derived client keeps the fill-in too.
    const plain = (model.openai() as any).withOptions({ maxRetries: 0 }) as OpenAI;
    const r = await plain.chat.completions.create({ model: "", messages: ask("x"), max_tokens: 2 });
    expect(r.model).toBe(model.inferenceName());
  });
});

describe("a wrapped create() that cannot send its body", () => {
  const bad = () => {
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    return [
      { field: "metadata", value: { n: 1n }, path: "body.metadata.n", why: /BigInt/ },
      {
        field: "response_format",
        value: cycle,
        path: "body.response_format.self",
        why: /circular/,
      },
      { field: "seed", value: 7n, path: "body.seed", why: /BigInt/ },
    ];
  };

  it("returns a promise that rejects, so .catch() gets the error, named by path", async () => {
    const recorder = new Recorder();
    const openai = recorder.wrap(new OpenAI({ baseURL: vllm.baseURL, apiKey: "k" }));
    const before = vllm.exchanges.length;
    const caught: unknown[] = [];
    await recorder.rollout(async () => {
      for (const b of bad()) {
        let returned: unknown;
        // Not `try { await … }`: that cannot tell a throw from a rejection.
        const call = () => {
          returned = openai.chat.completions
            .create({ model: "m", messages: ask("hi"), [b.field]: b.value } as never)
            .catch((e: unknown) => {
              caught.push(e);
              return "handled";
            });
        };
        expect(call).not.toThrow();
        await expect(returned).resolves.toBe("handled");
      }
    });
    expect(caught).toHaveLength(3);
    bad().forEach((b, i) => {
      expect(caught[i]).toBeInstanceOf(InvalidArgumentError);
      expect((caught[i] as Error).message).toContain(b.path);
      expect((caught[i] as Error).message).toMatch(b.why);
    });
    // Nothing was sent.
    expect(vllm.exchanges.length).toBe(before);
  });

  it("settles in Promise.allSettled beside good calls, and withResponse() rejects too", async () => {
    const recorder = new Recorder();
    const openai = recorder.wrap(new OpenAI({ baseURL: vllm.baseURL, apiKey: "k" }));
    let settled: PromiseSettledResult<unknown>[] = [];
    const t = await recorder.rollout(async () => {
      settled = await Promise.allSettled([
        openai.chat.completions.create({ model: "ok", messages: ask("1") }),
        openai.chat.completions.create({
          model: "m",
          messages: ask("2"),
          metadata: { n: 1n } as never,
        }),
        openai.chat.completions
          .create({ model: "m", messages: ask("3"), seed: 2n as never })
          .withResponse(),
        openai.chat.completions
          .create({ model: "m", messages: ask("4"), seed: 3n as never })
          .asResponse(),
      ]);
    });
    expect(settled.map((s) => s.status)).toEqual(["fulfilled", "rejected", "rejected", "rejected"]);
    for (const s of settled.slice(1))
      expect((s as PromiseRejectedResult).reason).toBeInstanceOf(InvalidArgumentError);
    expect(assistantTexts(t)).toEqual(["re: ok"]);
  });

  it("outside a rollout, behaves as the SDK does: a promise, never a throw", async () => {
    const recorder = new Recorder();
    const openai = recorder.wrap(new OpenAI({ baseURL: vllm.baseURL, apiKey: "k", maxRetries: 0 }));
    let returned: Promise<unknown> | undefined;
    expect(() => {
      returned = openai.chat.completions.create({
        model: "m",
        messages: ask("hi"),
        seed: 1n as never,
      });
    }).not.toThrow();
    const [s] = await Promise.allSettled([returned]);
    expect(s!.status).toBe("rejected");
  });
});
