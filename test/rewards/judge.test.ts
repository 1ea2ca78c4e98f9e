import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import OpenAI from "openai";
import {
  applyJudge,
  gatherTrajectoryGroups,
  judgeGroup,
  Trajectory,
  TrajectoryGroup,
} from "trajectory-recorder";
import { JudgeResponseError } from "trajectory-recorder/errors";
import { afterEach, describe, expect, it } from "vitest";

// A tiny OpenAI-compatible chat endpoint: answers with the queued texts in turn
// and keeps every request body it received.
async function judgeServer(answers: string[]) {
  const requests: { model: string; messages: { role: string; content: string }[] }[] = [];
  const server: Server = createServer(async (req: IncomingMessage, res) => {
    let body = "";
    for await (const chunk of req) body += chunk;
    requests.push(JSON.parse(body));
    const content = answers.shift() ?? "";
    res.writeHead(200, { "content-type": "application/json" });
    res.end(
      JSON.stringify({
        id: "chatcmpl-1",
        object: "chat.completion",
        created: 0,
        model: "judge",
        choices: [
          {
            index: 0,
            finish_reason: "stop",
            logprobs: null,
            message: { role: "assistant", content },
          },
        ],
      }),
    );
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  const client = new OpenAI({
    baseURL: `http://127.0.0.1:${port}/v1`,
    apiKey: "test-key",
    maxRetries: 0,
  });
  return { client, requests, close: () => new Promise<void>((r) => server.close(() => r())) };
}

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

const task = { role: "user", content: "What is the capital of Australia?" };
const answer = (content: string) => ({
  finish_reason: "stop",
  index: 0,
  logprobs: null,
  message: { role: "assistant" as const, content },
});
const sampleGroup = () =>
  new TrajectoryGroup([
    new Trajectory({
      messages_and_choices: [task, answer("Sydney")],
      reward: 0.2,
      tools: [
        { type: "function", function: { name: "lookup_capital", parameters: { type: "object" } } },
      ] as never,
    }),
    new Trajectory({ messages_and_choices: [task, answer("Canberra")], reward: 0.9 }),
    new Trajectory({ messages_and_choices: [task, answer("Canberra, since 1913.")] }),
  ]);

describe("judgeGroup", () => {
  it("sends the trajectories to the judge model and puts each reward on the right trajectory", async () => {
    const server = await judgeServer([
      'Here you go:\n```json\n{"scores": [{"id": 3, "reward": 1, "explanation": "Correct with context."}, {"id": 1, "reward": 0, "explanation": "Wrong city."}, {"id": 2, "reward": 0.8, "explanation": "Correct."}]}\n```',
    ]);
    close = server.close;
    const scores = await judgeGroup(sampleGroup(), { client: server.client, model: "judge-model" });
    expect(scores).toEqual([
      { reward: 0, explanation: "Wrong city." },
      { reward: 0.8, explanation: "Correct." },
      { reward: 1, explanation: "Correct with context." },
    ]);
    expect(server.requests).toHaveLength(1);
    const request = server.requests[0];
    expect(request?.model).toBe("judge-model");
    const prompt = request?.messages.map((m) => m.content).join("\n") ?? "";
    // The shared task is sent once; each attempt carries its own turns.
    expect(prompt.split("capital of Australia").length - 1).toBe(1);
    expect(prompt).toMatch(/<attempt id="1">\n.*"Sydney"/);
    expect(prompt).toMatch(/<attempt id="2">\n.*"Canberra"/);
    expect(prompt).toMatch(/<attempt id="3">\n.*"Canberra, since 1913\."/);
    expect(prompt).toContain("ids 1 to 3");
    expect(prompt).toMatch(/<tools>\n.*"lookup_capital"/);
  });

  it("retries once on a malformed answer, telling the model what was wrong", async () => {
    const server = await judgeServer([
      '{"scores": [{"id": 1, "reward": 0.1}, {"id": 2, "reward": 7}]}',
      '{"scores": [{"id": 1, "reward": 0.1, "explanation": "a"}, {"id": 2, "reward": 0.7, "explanation": "b"}, {"id": 3, "reward": 0.9, "explanation": "c"}]}',
    ]);
    close = server.close;
    const scores = await judgeGroup(sampleGroup(), { client: server.client, model: "judge-model" });
    expect(scores.map((s) => s.reward)).toEqual([0.1, 0.7, 0.9]);
    expect(server.requests).toHaveLength(2);
    const retry = server.requests[1]?.messages ?? [];
    expect(retry.at(-2)).toEqual({
      role: "assistant",
      content: '{"scores": [{"id": 1, "reward": 0.1}, {"id": 2, "reward": 7}]}',
    });
    expect(retry.at(-1)?.content).toContain("scores.1.reward");
  });

  it("throws a JudgeResponseError after a second unusable answer", async () => {
    const server = await judgeServer([
      "I think the second one is best.",
      '{"scores": [{"id": 1, "reward": 0.5}]}',
    ]);
    close = server.close;
    const error = await judgeGroup(sampleGroup(), {
      client: server.client,
      model: "judge-model",
    }).catch((e) => e);
    expect(error).toBeInstanceOf(JudgeResponseError);
    expect(error.message).toBe(
      "The judge model judge-model gave an unusable answer twice: it has no score for id 2; expected ids 1 to 3.",
    );
    expect(error.answer).toBe('{"scores": [{"id": 1, "reward": 0.5}]}');
  });

  it("judges identical trajectories once and copies the score", async () => {
    const server = await judgeServer([
      '{"scores": [{"id": 1, "reward": 0.6, "explanation": "Fine."}]}',
    ]);
    close = server.close;
    const same = () => new Trajectory({ messages_and_choices: [task, answer("Canberra")] });
    const scores = await judgeGroup(new TrajectoryGroup([same(), same()]), {
      client: server.client,
      model: "j",
    });
    expect(scores).toEqual([
      { reward: 0.6, explanation: "Fine." },
      { reward: 0.6, explanation: "Fine." },
    ]);
    expect(server.requests[0]?.messages[1]?.content).not.toContain('<attempt id="2">');
  });
});

describe("applyJudge", () => {
  it("writes the judge's reward, keeps the old one in metrics and logs the explanation", async () => {
    const server = await judgeServer([
      '{"scores": [{"id": 1, "reward": 0, "explanation": "Wrong."}, {"id": 2, "reward": 0.8, "explanation": "Right."}, {"id": 3, "reward": 1, "explanation": "Best."}]}',
    ]);
    close = server.close;
    const group = await applyJudge(sampleGroup(), { client: server.client, model: "judge-model" });
    expect(group.trajectories.map((t) => t.reward)).toEqual([0, 0.8, 1]);
    expect(group.trajectories[0]?.metrics).toEqual({ independent_reward: 0.2, ruler_score: 0 });
    expect(group.trajectories[2]?.logs).toEqual(["Judge explanation: Best."]);
  });
});

describe("a judge that fails (onError)", () => {
  const good = '{"scores":[{"id":1,"reward":0.1},{"id":2,"reward":0.9},{"id":3,"reward":0.8}]}';

  it('"throw" (the default) rejects; "skip" returns null and logs, as RULER with swallow_exceptions', async () => {
    const judge = await judgeServer(["no json", "still no json"]);
    close = judge.close;
    const base = { client: judge.client, model: "judge" };
    await expect(applyJudge(sampleGroup(), base)).rejects.toBeInstanceOf(JudgeResponseError);
    const warnings: string[] = [];
    const judge2 = await judgeServer(["no json", "still no json"]);
    const group = sampleGroup();
    const out = await applyJudge(group, {
      client: judge2.client,
      model: "judge",
      onError: "skip",
      logger: { warn: (m) => warnings.push(m) },
    });
    await judge2.close();
    expect(out).toBeNull();
    expect(group.trajectories.map((t) => t.reward)).toEqual([0.2, 0.9, 0]);
    expect(warnings[0]).toMatch(
      /^applyJudge: The judge judge failed on this group: .*; the group is skipped\.$/,
    );
  });

  it('"keep" returns the group unjudged with the failure on each trajectory\'s logs', async () => {
    const judge = await judgeServer(["no json", "still no json"]);
    close = judge.close;
    const group = sampleGroup();
    const out = await applyJudge(group, {
      client: judge.client,
      model: "judge",
      onError: "keep",
      logger: { warn: () => {} },
    });
    expect(out).toBe(group);
    expect(group.trajectories.map((t) => t.reward)).toEqual([0.2, 0.9, 0]);
    expect(group.trajectories[0]?.metrics).not.toHaveProperty("ruler_score");
    expect(group.trajectories[0]?.logs.at(-1)).toMatch(/The judge judge failed on this group/);
  });

  it("in a gather, loses only the group whose judgement failed; the others are judged and kept", async () => {
    // The second group's judge answers garbage twice; the others answer well.
    const judge = await judgeServer([good, "garbage", "garbage", good]);
    close = judge.close;
    const warnings: string[] = [];
    const groups = await gatherTrajectoryGroups([sampleGroup(), sampleGroup(), sampleGroup()], {
      concurrency: 1,
      afterEach: (g) =>
        applyJudge(g, {
          client: judge.client,
          model: "judge",
          onError: "skip",
          logger: { warn: (m) => warnings.push(m) },
        }),
    });
    expect(groups).toHaveLength(2);
    for (const g of groups)
      expect(g.trajectories.map((t) => t.metrics.ruler_score)).toEqual([0.1, 0.9, 0.8]);
    expect(warnings).toHaveLength(1);
    // Without skip, the thrown judgement is still confined to its group by the gather.
    const judge2 = await judgeServer([good, "garbage", "garbage", good]);
    const gatherWarnings: string[] = [];
    const seen: number[] = [];
    const kept = await gatherTrajectoryGroups([sampleGroup(), sampleGroup(), sampleGroup()], {
      concurrency: 1,
      afterEach: (g) => applyJudge(g, { client: judge2.client, model: "judge" }),
      logger: { warn: (m) => gatherWarnings.push(m) },
      onProgress: (p) => seen.push(p.failedGroups ?? 0),
    });
    await judge2.close();
    expect(kept).toHaveLength(2);
    expect(seen.at(-1)).toBe(1);
    expect(gatherWarnings[0]).toMatch(/afterEach failed on groups\[\d\]/);
  });

  it("refuses an unknown policy naming the field", async () => {
    await expect(
      applyJudge(sampleGroup(), {
        client: new OpenAI({ apiKey: "x" }),
        model: "m",
        onError: "ignore" as never,
      }),
    ).rejects.toThrow(/options\.onError/);
  });
});
