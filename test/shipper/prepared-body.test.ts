// Prepared groups travel as the pieces they were written in: never joined
// into one buffer, sent whole on every attempt, and their recorded logprobs
// stay in columns through the check before shipping.
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import {
  TrainableModel,
  TrainingClient,
  Trajectory,
  TrajectoryCheckError,
  TrajectoryGroup,
  validateGroup,
} from "trajectory-recorder";
import { afterEach, expect, it } from "vitest";
import { logPreparedGroups } from "../../src/client/prepared.js";
import { CompactLogprobs } from "../../src/logprobs/index.js";
import { recordedChoices } from "../../src/recorder/response.js";
import { PreparedGroup, prepareGroup, refuseUntrainableBytes } from "../../src/trajectory/index.js";

const MODEL = "5b1f5d8e-3f5e-4a57-8d0a-6f0f3f1e2a11";
const stops: (() => void)[] = [];
afterEach(() => {
  for (const stop of stops.splice(0)) stop();
});

const tok = (token: string, logprob: number) => ({
  token,
  logprob,
  bytes: [...Buffer.from(token)],
  top_logprobs: [{ token, logprob, bytes: [...Buffer.from(token)] }],
});

function recordedTrajectory() {
  const [choice] = recordedChoices({
    choices: [
      {
        index: 0,
        finish_reason: "stop",
        message: { role: "assistant", content: "Paris é" },
        logprobs: { content: [tok("Paris", -0.25), tok(" é", -1e-9)], refusal: null },
        token_ids: [1, 2],
      },
    ],
    prompt_token_ids: [7],
  });
  return new Trajectory({
    messages_and_choices: [{ role: "user", content: "capital?" }, choice!],
    reward: 1,
  });
}

/** A server that answers each request with the next status, keeping what it received. */
async function server(statuses: number[]) {
  const received: { headers: IncomingMessage["headers"]; body: string }[] = [];
  const srv = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on("data", (d: Buffer) => parts.push(d));
    req.on("end", () => {
      received.push({ headers: req.headers, body: Buffer.concat(parts).toString("utf8") });
      res.writeHead(statuses.shift() ?? 200, { "content-type": "application/json" });
      res.end("{}");
    });
  });
  await new Promise<void>((resolve) => srv.listen(0, "127.0.0.1", resolve));
  stops.push(() => srv.close());
  const { port } = srv.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/v1`, received };
}

it("sends a group held in many pieces as one JSON body with its length, whole again on a retry", async () => {
  const group = new TrajectoryGroup([recordedTrajectory(), recordedTrajectory()]);
  const text = JSON.stringify(group);
  // Pieces cut anywhere, even inside a multi-byte character.
  const bytes = Buffer.from(text);
  const cut = bytes.indexOf(Buffer.from("é")) + 1;
  const pieces = [bytes.subarray(0, 5), bytes.subarray(5, cut), bytes.subarray(cut)];
  const prepared = new PreparedGroup(pieces);
  expect(prepared.byteLength).toBe(bytes.byteLength);

  const { url, received } = await server([503, 200]);
  const client = new TrainingClient({ apiKey: "k", baseURL: url });
  await logPreparedGroups(client.models, MODEL, "val", [prepared.chunks, prepared.chunks], {
    idempotent: true,
    maxRetries: 1,
  });
  expect(received).toHaveLength(2);
  const expected = `{"split":"val","trajectory_groups":[${text},${text}]}`;
  for (const { headers, body } of received) {
    expect(body).toBe(expected);
    expect(headers["content-length"]).toBe(String(Buffer.byteLength(expected)));
    expect(headers["transfer-encoding"]).toBeUndefined();
  }
});

it("prepares a group whose pieces, joined, are JSON.stringify(group)", async () => {
  const group = new TrajectoryGroup([recordedTrajectory()]);
  const prepared = await prepareGroup(group, "test");
  expect(Buffer.concat(prepared.chunks).toString("utf8")).toBe(JSON.stringify(group));
  expect(prepared.toJSON()).toEqual(JSON.parse(JSON.stringify(group)));
});

it("finds a trainable Choice in prepared bytes even when a piece boundary cuts its key", () => {
  const bytes = Buffer.from(JSON.stringify(new TrajectoryGroup([recordedTrajectory()])));
  const key = bytes.indexOf(Buffer.from('"logprobs":{'));
  for (const at of [key + 1, key + 6, key + 11]) {
    const pieces = [bytes.subarray(0, at), bytes.subarray(at)];
    expect(() => refuseUntrainableBytes([pieces], "train")).not.toThrow();
  }
  // One byte per piece: the key spans twelve of them.
  const bytewise = [...bytes].map((b) => Uint8Array.of(b));
  expect(() => refuseUntrainableBytes([bytewise], "train")).not.toThrow();
  const untrained = Buffer.from(
    JSON.stringify(new TrajectoryGroup([new Trajectory({ messages_and_choices: [] })])),
  );
  expect(() =>
    refuseUntrainableBytes([[untrained.subarray(0, 9), untrained.subarray(9)]], "train"),
  ).toThrow(TrajectoryCheckError);
});

it("checks recorded logprobs without building the SDK's token objects back", () => {
  const t = recordedTrajectory();
  const logprobs = (t.messages_and_choices[1] as { logprobs: CompactLogprobs }).logprobs;
  expect(logprobs).toBeInstanceOf(CompactLogprobs);
  let reads = 0;
  for (const key of ["content", "refusal"] as const) {
    const own = Object.getOwnPropertyDescriptor(logprobs, key)!;
    Object.defineProperty(logprobs, key, {
      ...own,
      get: () => {
        reads += 1;
        return own.get!.call(logprobs);
      },
    });
  }
  const result = validateGroup(new TrajectoryGroup([t]), { mode: "warn" });
  expect(result.problems.filter((p) => p.path.endsWith(".logprobs"))).toEqual([]);
  JSON.stringify(t);
  expect(reads).toBe(0);
});

it("gives toJSON() data of its own: editing it changes nothing recorded", () => {
  const t = recordedTrajectory();
  const choice = t.messages_and_choices[1] as { logprobs: { content: { logprob: number }[] } };
  // Read once, so the trajectory holds the SDK's objects from then on.
  expect(choice.logprobs.content[0]!.logprob).toBe(-0.25);
  const before = JSON.stringify(t);
  const wire = t.toJSON() as unknown as {
    messages_and_choices: { logprobs: { content: { logprob: number; bytes: number[] }[] } }[];
  };
  wire.messages_and_choices[1]!.logprobs.content[0]!.logprob = 5;
  wire.messages_and_choices[1]!.logprobs.content[0]!.bytes.push(1);
  expect(JSON.stringify(t)).toBe(before);
});

it("model.log sends each group as its JSON.stringify text, written once, with the body's length", async () => {
  const { url, received } = await server([]);
  const modelJson = JSON.stringify({
    id: MODEL,
    entity: "e",
    project: "p",
    name: "n",
    base_model: "b",
  });
  // The register call answers with the model; the log call with {}.
  const client = new TrainingClient({
    apiKey: "k",
    baseURL: url,
    fetch: async (input, init) => {
      if (String(input).endsWith("/preview/models"))
        return new Response(modelJson, { headers: { "content-type": "application/json" } });
      return fetch(input, init);
    },
  });
  const model = await TrainableModel.register(client, { project: "p", name: "n", baseModel: "b" });
  const group = new TrajectoryGroup([recordedTrajectory(), recordedTrajectory()]);
  await model.log([group, group], { split: "train" });
  const expected = `{"split":"train","trajectory_groups":[${JSON.stringify(group)},${JSON.stringify(group)}]}`;
  expect(received).toHaveLength(1);
  expect(received[0]!.body).toBe(expected);
  expect(received[0]!.headers["content-length"]).toBe(String(Buffer.byteLength(expected)));
});
