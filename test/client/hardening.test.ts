import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { inspect } from "node:util";
import {
  APIError,
  gatherTrajectoryGroups,
  InvalidArgumentError,
  inferenceModelName,
  TrainableModel,
  TrainingClient,
  Trajectory,
  TrajectoryGroup,
  TrajectoryValidationError,
} from "trajectory-recorder";
import { APIPromise, CursorPage } from "trajectory-recorder/core";
import { NotFoundError, RequestValidationError } from "trajectory-recorder/errors";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { abortableSleep } from "../../src/client/index.js";
import { toSftJsonl } from "../../src/training/index.js";

const KEY = "sk-live-9f8e7d6c5b4a39281706";
const MODEL_ID = "3f0b6c1e-8a40-4c55-9d1e-6a1f5c3b2a10";
let seen: IncomingMessage[] = [];
let answer: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.end("{}");
let baseURL = "";
const server = createServer((req, res) => {
  seen.push(req);
  req.resume();
  req.on("end", () => answer(req, res));
});
beforeAll(async () => {
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});
beforeEach(() => {
  seen = [];
});

/** Every run of 6 characters of the key: none may appear in a message. */
function fragments(key: string): string[] {
  return Array.from({ length: key.length - 5 }, (_, i) => key.slice(i, i + 6));
}

describe("an API key an HTTP header cannot carry", () => {
  const bad = [`${KEY}\nX-Injected: 1`, `${KEY}\0`, `${KEY}\r`, `sk-€uro-${KEY}`, `${KEY}\x7f`];
  it("is refused at construction, with a message holding no part of the key", () => {
    for (const apiKey of bad) {
      let error: unknown;
      try {
        new TrainingClient({ apiKey, baseURL });
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(RequestValidationError);
      const message = (error as Error).message;
      expect(message).toMatch(/apiKey: the API key holds a character an HTTP header cannot carry/);
      for (const part of fragments(apiKey)) expect(message).not.toContain(part);
      expect(inspect(error)).not.toContain(KEY.slice(0, 8));
    }
  });
  it("is refused from WANDB_API_KEY too, naming the variable", () => {
    const saved = process.env.WANDB_API_KEY;
    process.env.WANDB_API_KEY = `${KEY}\u2028x`;
    try {
      expect(() => new TrainingClient({ baseURL })).toThrow(/WANDB_API_KEY: the API key holds/);
    } finally {
      if (saved === undefined) delete process.env.WANDB_API_KEY;
      else process.env.WANDB_API_KEY = saved;
    }
  });
  it("in a header option rejects the call as bad input, never as a connection error to retry", async () => {
    const client = new TrainingClient({ apiKey: KEY, baseURL, maxRetries: 3 });
    const error = await client
      .health({ headers: { "x-token": `${KEY}\nX` } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RequestValidationError);
    expect((error as Error).message).toMatch(
      /options\.headers\.x-token: expected a valid HTTP header/,
    );
    expect((error as Error).message).not.toContain(KEY.slice(0, 8));
    expect(seen).toHaveLength(0);
  });
});

describe("a server echoing the key", () => {
  const echoHeaders = (res: ServerResponse) => {
    res.setHeader("content-type", "application/json");
    res.setHeader("set-cookie", ["session=abc123cookie; HttpOnly", "other=zzz"]);
    res.setHeader("x-echo", `Bearer ${KEY}`);
    res.setHeader("x-request-id", "req-1");
  };
  const clean = (error: unknown) => {
    for (const shown of [inspect(error, { depth: 10 }), JSON.stringify(error)]) {
      expect(shown).not.toContain(KEY);
      expect(shown).not.toContain("abc123cookie");
      expect(shown).toContain("[redacted]");
      expect(shown).toContain("req-1");
    }
  };
  it("leaves no key in the body, message, headers, inspect() or JSON of a 2xx the schema refuses", async () => {
    answer = (req, res) => {
      echoHeaders(res);
      res.end(JSON.stringify({ status: 42, you_sent: req.headers.authorization }));
    };
    const client = new TrainingClient({ apiKey: KEY, baseURL });
    const error = (await client.health().catch((e: unknown) => e)) as APIError;
    expect(error).toBeInstanceOf(APIError);
    expect(error.message).toMatch(/does not understand: status/);
    expect(error.body).toEqual({ status: 42, you_sent: "Bearer [redacted]" });
    expect(error.headers?.get("set-cookie")).toBe("[redacted], [redacted]");
    expect(error.headers?.get("x-echo")).toBe("[redacted]");
    clean(error);
  });
  it("redacts the headers of an error status, and of the SDK's error for chat", async () => {
    answer = (req, res) => {
      echoHeaders(res);
      res.statusCode = 404;
      res.end(JSON.stringify({ detail: `no model for ${req.headers.authorization}` }));
    };
    const client = new TrainingClient({ apiKey: KEY, baseURL, maxRetries: 0 });
    const error = await client.models.delete(MODEL_ID).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotFoundError);
    clean(error);
    const chat = await client.chat.completions
      .create({ model: "m", messages: [{ role: "user", content: "hi" }] })
      .catch((e: unknown) => e);
    expect((chat as { status?: number }).status).toBe(404);
    for (const shown of [inspect(chat, { depth: 10 }), JSON.stringify(chat)]) {
      expect(shown).not.toContain(KEY);
      expect(shown).not.toContain("abc123cookie");
    }
  });
});

describe("bad arguments reject with an error naming them, before anything is sent", () => {
  const client = () => new TrainingClient({ apiKey: KEY, baseURL, maxRetries: 2 });
  it("rejects, never throws, for ids of the wrong type", async () => {
    const c = client();
    for (const id of [Symbol("x"), 5, null, "\ud800", {}]) {
      let call: Promise<unknown> | undefined;
      expect(() => {
        call = c.models.delete(id as never);
      }).not.toThrow();
      await expect(call).rejects.toThrow(/models\.delete.*model_id: expected a UUID string/);
      await expect(c.trainingJobs.retrieve(id as never)).rejects.toThrow(/training_job_id/);
    }
    expect(seen).toHaveLength(0);
  });
  it("names the field holding a BigInt, a cycle or runaway nesting", async () => {
    const c = client();
    const group = (metadata: unknown) => ({
      trajectories: [{ messages_and_choices: [], reward: 1, metadata }],
    });
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    let deep: unknown = 1;
    for (let i = 0; i < 5_000; i++) deep = { a: deep };
    const cases: [unknown, RegExp][] = [
      [
        { n: 10n },
        /trajectory_groups\[0\]\.trajectories\[0\]\.metadata\.n: expected a JSON value, received a BigInt/,
      ],
      [cyclic, /metadata\.self: expected a JSON value, received a circular reference/],
      [deep, /metadata\.a\.a.*: expected JSON nested at most 256 levels deep/],
    ];
    for (const [metadata, message] of cases) {
      const error = await c.models
        .log(MODEL_ID, { split: "val", trajectory_groups: [group(metadata)] as never })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RequestValidationError);
      expect((error as Error).message).toMatch(message);
    }
    expect(seen).toHaveLength(0);
  });
  it("names each bad client option and per-call option", async () => {
    const cases: [unknown, RegExp][] = [
      [{ apiKey: KEY, baseURL: 1 }, /baseURL: .*expected string/],
      [{ apiKey: KEY, baseURL: "ftp://x" }, /baseURL: expected an http\(s\) URL/],
      [{ apiKey: 5 }, /apiKey: .*expected string/],
      [{ apiKey: KEY, timeout: "soon" }, /timeout: .*expected number/],
      [{ apiKey: KEY, maxRetries: -1 }, /maxRetries: .*>=0/],
      [{ apiKey: KEY, fetch: "no" }, /fetch: expected a function/],
      [{ apiKey: KEY, defaultHeaders: { a: 1 } }, /defaultHeaders\.a: .*expected string/],
      [5, /\(root\): expected an options object/],
    ];
    for (const [options, message] of cases) {
      expect(() => new TrainingClient(options as never)).toThrow(RequestValidationError);
      expect(() => new TrainingClient(options as never)).toThrow(message);
    }
    const c = client();
    await expect(c.health({ timeout: "x" } as never)).rejects.toThrow(/options\.timeout/);
    await expect(c.health({ signal: 5 } as never)).rejects.toThrow(
      /options\.signal: expected an AbortSignal/,
    );
    await expect(c.health(5 as never)).rejects.toThrow(/options: /);
    expect(seen).toHaveLength(0);
  });
});

describe("the data model's entry points name what they expected", () => {
  it("new Trajectory, new TrajectoryGroup, fromJSON and the SFT builder", () => {
    expect(() => new TrajectoryGroup(5 as never)).toThrow(InvalidArgumentError);
    expect(() => new TrajectoryGroup(5 as never)).toThrow(
      /init: expected an object such as \{ trajectories \}, received a number/,
    );
    expect(() => new TrajectoryGroup([], null as never)).toThrow(
      /options: expected an object, received null/,
    );
    expect(() => new Trajectory(null as never)).toThrow(/init: expected an object/);
    expect(() => Trajectory.fromJSON("{not json")).toThrow(TrajectoryValidationError);
    expect(() => Trajectory.fromJSON("{not json")).toThrow(/expected a JSON string or an object/);
    const odd = Object.create(null);
    expect(new TrajectoryGroup([odd]).exceptions[0]?.message).toBe("[object Object]");
    expect(() => toSftJsonl([null] as never)).toThrow(
      /data\[0\]: expected a Trajectory or a \{ messages \} object, received null/,
    );
  });
  it("trainSft([null]) rejects naming data[0] before anything is sent", async () => {
    const c = new TrainingClient({ apiKey: KEY, baseURL, maxRetries: 0 });
    answer = (_req, res) => {
      res.setHeader("content-type", "application/json");
      res.end(
        JSON.stringify({
          id: MODEL_ID,
          entity: "e",
          project: "p",
          name: "n",
          base_model: "b",
          run_id: "r",
        }),
      );
    };
    const model = await TrainableModel.register(c, { project: "p", name: "n", baseModel: "b" });
    seen = [];
    const upload = { upload: async () => "file:///x" };
    await expect(model.trainSft([null] as never, {}, { uploader: upload })).rejects.toThrow(
      /data\[0\]: expected a Trajectory/,
    );
    expect(seen).toHaveLength(0);
  });
});

describe("helpers reject bad arguments by name instead of tripping over them", () => {
  it("abortableSleep with a signal that is not one rejects, and leaves no timer to crash later", async () => {
    await expect(abortableSleep(1, 5 as never)).rejects.toThrow(/signal: expected an AbortSignal/);
    await expect(abortableSleep("1" as never)).rejects.toThrow(/ms: expected a number/);
    // The old timer fired after the rejection and threw from inside Node's timers.
    await new Promise((r) => setTimeout(r, 10));
  });
  it("inferenceModelName and gatherTrajectoryGroups name the argument", async () => {
    expect(() => inferenceModelName(null as never)).toThrow(/ref: expected an object/);
    expect(() => inferenceModelName({ entity: 1n, project: "p", name: "n" } as never)).toThrow(
      /entity: expected a non-empty string without "\/", received a BigInt/,
    );
    await expect(gatherTrajectoryGroups(5 as never)).rejects.toThrow(
      /groups: expected an iterable/,
    );
    await expect(gatherTrajectoryGroups([5] as never)).rejects.toThrow(/groups\[0\]: expected/);
  });
});

describe("the client's building blocks check what they are built from", () => {
  it("new APIPromise and new CursorPage name the bad argument", () => {
    expect(() => new APIPromise(undefined as never)).toThrow(InvalidArgumentError);
    expect(() => new APIPromise(null as never)).toThrow(
      "new APIPromise(raw): raw: expected a promise of { data, response }, received null.",
    );
    const fetchAfter = () => new APIPromise(Promise.reject(new Error("none")));
    expect(() => new CursorPage(null as never, fetchAfter as never)).toThrow(
      "new CursorPage(body, fetchAfter): body: expected a page object, received null.",
    );
    expect(() => new CursorPage({ data: [null] } as never, fetchAfter as never)).toThrow(
      /body\.data: expected an array of items with string ids, received an array/,
    );
    expect(
      () => new CursorPage({ data: [], has_more: "yes" } as never, fetchAfter as never),
    ).toThrow(/body\.has_more: expected a boolean, received a string/);
    expect(() => new CursorPage({ data: [] }, 5 as never)).toThrow(
      /fetchAfter: expected a function/,
    );
    expect(new CursorPage({ data: [{ id: "a" }] }, fetchAfter as never).last_id).toBe("");
  });
});
