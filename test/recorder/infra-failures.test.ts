// A rollout during which a recorded call failed for the infrastructure's sake
// (an upstream 5xx, a refused connection, a stream cut off) is marked as an
// infrastructure failure, even when the agent caught the error and went on:
// its reward would say more about the upstream than about the policy.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import OpenAI from "openai";
import { Recorder, Trajectory } from "trajectory-recorder";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// What the loopback upstream does, chosen by the request's model.
function completion(model: string) {
  return {
    id: "cmpl-1",
    object: "chat.completion",
    created: 1,
    model,
    choices: [
      {
        index: 0,
        finish_reason: "stop",
        message: { role: "assistant", content: "red" },
        logprobs: null,
      },
    ],
  };
}

function chunk(model: string, finish: string | null) {
  return `data: ${JSON.stringify({
    id: "cmpl-2",
    object: "chat.completion.chunk",
    created: 1,
    model,
    choices: [{ index: 0, delta: { role: "assistant", content: "re" }, finish_reason: finish }],
  })}\n\n`;
}

let server: Server;
let url: string;
beforeAll(async () => {
  server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on("data", (c: Buffer) => parts.push(c));
    req.on("end", () => {
      const model = String(JSON.parse(Buffer.concat(parts).toString()).model);
      if (model === "down") {
        res.writeHead(503, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { message: "the node was preempted" } }));
      } else if (model === "bad") {
        res.writeHead(400, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { message: "bad request" } }));
      } else if (model === "cut" || model === "ends-early" || model === "long") {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write(chunk(model, null));
        // "cut": the connection breaks mid-stream; "ends-early": the body ends with no last chunk.
        if (model === "cut") setTimeout(() => res.destroy(), 20);
        else if (model === "ends-early") setTimeout(() => res.end(), 20);
        else {
          res.write(chunk(model, null));
          setTimeout(() => res.end(`${chunk(model, "stop")}data: [DONE]\n\n`), 20);
        }
      } else {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify(completion(model)));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

const ask = (model: string) => ({ model, messages: [{ role: "user" as const, content: "hi" }] });

/** A rollout of an agent that makes `models`' calls in turn and catches every error. */
async function agentRollout(
  models: string[],
  options: { recorder?: Recorder; optOut?: boolean } = {},
) {
  const recorder = options.recorder ?? new Recorder({ tokenIds: false, logprobs: false });
  const openai = recorder.wrap(new OpenAI({ baseURL: url, apiKey: "k", maxRetries: 0 }));
  const caught: string[] = [];
  const t = await recorder.rollout(async (t) => {
    if (options.optOut) t.clearInfraFailure();
    for (const model of models) {
      try {
        if (["cut", "ends-early", "long"].includes(model)) {
          const stream = await openai.chat.completions.create({ ...ask(model), stream: true });
          for await (const _ of stream);
        } else await openai.chat.completions.create(ask(model));
      } catch (error) {
        caught.push((error as Error).constructor.name);
      }
    }
    t.reward = 0;
  });
  return { t, caught };
}

describe("the recorder marks rollouts the infrastructure failed", () => {
  it("a caught 503 marks the rollout in metadata and logs; the JSON keeps ART's keys", async () => {
    const { t, caught } = await agentRollout(["ok", "down", "ok"]);
    expect(caught).toEqual(["InternalServerError"]);
    expect(t.infraFailure).toBe("upstream_error");
    const json = JSON.parse(JSON.stringify(t));
    expect(json.metadata.infra_failure).toBe("upstream_error");
    expect(Object.keys(json)).toEqual(Object.keys(new Trajectory().toJSON()));
    expect(json.logs.join("\n")).toMatch(
      /infrastructure failure \(upstream_error\): completion 2 \(down\): .*503.*left out of its group's statistics and of training/,
    );
  });

  it("a normal rollout, a 4xx and a stream the caller stops are not marked", async () => {
    expect((await agentRollout(["ok", "ok"])).t.infraFailure).toBeUndefined();
    expect((await agentRollout(["bad"])).t.infraFailure).toBeUndefined();
    expect((await agentRollout(["long"])).t.infraFailure).toBeUndefined();
    const recorder = new Recorder({ tokenIds: false, logprobs: false });
    const openai = recorder.wrap(new OpenAI({ baseURL: url, apiKey: "k", maxRetries: 0 }));
    const t = await recorder.rollout(async () => {
      const stream = await openai.chat.completions.create({ ...ask("long"), stream: true });
      for await (const _ of stream) break;
    });
    expect(t.infraFailure).toBeUndefined();
    expect(t.metadata).toEqual({});
  });

  it("a stream cut off mid-way, or ending before its last chunk, is marked stream_cut", async () => {
    const cut = await agentRollout(["cut"]);
    expect(cut.t.infraFailure).toBe("stream_cut");
    const early = await agentRollout(["ends-early"]);
    expect(early.caught).toEqual([]);
    expect(early.t.infraFailure).toBe("stream_cut");
  });

  it("a refused connection is marked transport", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const recorder = new Recorder({ tokenIds: false, logprobs: false });
    const openai = recorder.wrap(
      new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: "k", maxRetries: 0 }),
    );
    const t = await recorder.rollout(async () => {
      await openai.chat.completions.create(ask("ok")).catch(() => {});
    });
    expect(t.infraFailure).toBe("transport");
  });

  it("the application opts out per rollout or per recorder, and can mark or clear by hand", async () => {
    const optedOut = await agentRollout(["down"], { optOut: true });
    expect(optedOut.t.infraFailure).toBeUndefined();
    expect(optedOut.t.metadata.infra_failure).toBe(false);
    expect(optedOut.t.logs.join("\n")).toMatch(/not marked, the application keeps this rollout/);
    const quiet = new Recorder({ tokenIds: false, logprobs: false, markInfraFailures: false });
    expect((await agentRollout(["down"], { recorder: quiet })).t.infraFailure).toBeUndefined();
    expect(() => new Recorder({ markInfraFailures: "no" as never })).toThrow(
      /options\.markInfraFailures/,
    );

    const { t } = await agentRollout(["ok"]);
    t.markInfraFailure("tool_runner", "the sandbox died");
    expect(t.infraFailure).toBe("tool_runner");
    expect(t.logs.at(-1)).toMatch(/infrastructure failure \(tool_runner\): the sandbox died/);
    t.clearInfraFailure();
    expect(t.infraFailure).toBeUndefined();
    expect(t.metadata.infra_failure).toBe(false);
  });

  it("a rollout recorded through its endpoint (t.baseURL) is marked when the upstream answers 503", async () => {
    const recorder = new Recorder({
      upstream: { baseURL: url, apiKey: "k" },
      endpoint: { maxRetries: 0 },
      tokenIds: false,
      logprobs: false,
    });
    try {
      const statuses: number[] = [];
      const t = await recorder.rollout(async (t) => {
        for (const model of ["ok", "down"]) {
          const res = await fetch(`${t.baseURL}/chat/completions`, {
            method: "POST",
            headers: { authorization: `Bearer ${t.apiKey}`, "content-type": "application/json" },
            body: JSON.stringify(ask(model)),
          });
          statuses.push(res.status);
          await res.arrayBuffer();
        }
      });
      expect(statuses).toEqual([200, 503]);
      expect(t.infraFailure).toBe("upstream_error");
    } finally {
      await recorder.close();
    }
  });
});
