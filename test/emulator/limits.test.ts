import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { request } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, expect, it } from "vitest";
import type { Emulator } from "../../src/emulator/index.js";
import { call, createModel, KEY, start } from "./helpers.js";

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});
async function tempDir() {
  const d = await mkdtemp(path.join(tmpdir(), "emu-limits-"));
  dirs.push(d);
  return d;
}

/** `{"a":{"a":...{"a":1}...}}`, built as text: JSON.stringify itself would overflow. */
function nested(depth: number): string {
  return `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;
}

async function post(emu: Emulator, p: string, text: string) {
  const res = await fetch(`${emu.url}${p}`, {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
    body: text,
  });
  return { status: res.status, json: (await res.json()) as any };
}

it("answers 422 naming the field to metadata nested 20,000 deep, and keeps serving and saving its data dir", async () => {
  const dataDir = await tempDir();
  const warnings: string[] = [];
  const emu = await start({ dataDir, onWarning: (m) => warnings.push(m) });
  try {
    const m = await createModel(emu, "deep");
    const traj = (reward: number) =>
      `{"messages_and_choices":[{"role":"user","content":"hi"}],"reward":${reward},"metadata":${nested(20_000)}}`;
    const body = `{"split":"val","trajectory_groups":[{"trajectories":[${traj(1)},${traj(0)}]}]}`;
    expect(body.length).toBeGreaterThan(100_000);
    const r = await post(emu, `/preview/models/${m.id}/log`, body);
    expect(r.status).toBe(422);
    expect(r.json.detail[0].loc.slice(0, 6)).toEqual([
      "body",
      "trajectory_groups",
      0,
      "trajectories",
      0,
      "metadata",
    ]);
    expect(r.json.detail[0].msg).toMatch(/nested at most 256 levels/);
    const jobs = await post(
      emu,
      "/preview/training-jobs",
      `{"model_id":"${m.id}","trajectory_groups":[{"trajectories":[${traj(1)}]}]}`,
    );
    expect(jobs.status).toBe(422);
    // Still serving, and the state file still takes writes.
    const ok = await call(emu, "POST", `/preview/models/${m.id}/log`, {
      split: "val",
      trajectory_groups: [
        { trajectories: [{ messages_and_choices: [], reward: 1, metadata: { deep: { er: 1 } } }] },
      ],
    });
    expect(ok.status).toBe(200);
  } finally {
    await emu.close();
  }
  const state = JSON.parse(await readFile(path.join(dataDir, "emulator-state.json"), "utf8"));
  expect(state.logs).toHaveLength(1);
  expect(warnings).toEqual([]);
});

it("reports a state write that fails through onWarning and keeps serving from memory", async () => {
  const parent = await tempDir();
  const dataDir = path.join(parent, "state");
  const warnings: string[] = [];
  const emu = await start({ dataDir, onWarning: (m) => warnings.push(m) });
  try {
    // A file where the data directory should be: every write now fails.
    await writeFile(dataDir, "not a directory");
    const m = await createModel(emu, "unsaved");
    await emu.close();
    expect(warnings.length).toBeGreaterThan(0);
    expect(warnings[0]).toMatch(/could not write its state to .*emulator-state\.json/);
    expect(m.name).toBe("unsaved");
  } finally {
    await emu.close();
  }
});

/** Streams `total` bytes of a JSON string body until the server answers; resolves with the status. */
function sendHuge(
  emu: Emulator,
  total: number,
  declareLength: boolean,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${emu.url}/chat/completions`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${KEY}`,
        "content-type": "application/json",
        ...(declareLength ? { "content-length": String(total) } : {}),
      },
    });
    req.on("response", (res) => {
      let body = "";
      res.on("data", (c) => {
        body += c;
      });
      res.on("end", () => {
        resolve({ status: res.statusCode ?? 0, body });
        req.destroy();
      });
    });
    req.on("error", reject);
    const chunk = Buffer.alloc(64 * 1024, "a");
    let sent = 0;
    const pump = () => {
      while (sent < total) {
        sent += chunk.length;
        if (!req.write(chunk)) {
          req.once("drain", pump);
          return;
        }
      }
      req.end();
    };
    req.write('{"model":"');
    pump();
  });
}

it("answers 413 to a body over maxBodyBytes, declared or streamed, and keeps serving", async () => {
  const emu = await start({ maxBodyBytes: 1024 * 1024 });
  try {
    for (const declared of [true, false]) {
      const answer = await sendHuge(emu, 8 * 1024 * 1024, declared);
      expect(answer.status).toBe(413);
      expect(JSON.parse(answer.body).error).toMatchObject({
        code: "request_too_large",
        message: expect.stringMatching(/larger than this server accepts/),
      });
    }
    const big = await post(emu, "/preview/models", `{"project":"${"p".repeat(2 * 1024 * 1024)}"}`);
    expect(big.status).toBe(413);
    expect(big.json.detail).toMatch(/larger than this server accepts \(1048576 bytes\)/);
    expect((await createModel(emu, "after")).name).toBe("after");
  } finally {
    await emu.close();
  }
});

it("takes 20 MB of trajectory groups under the default body limit", async () => {
  const emu = await start();
  try {
    const m = await createModel(emu, "big");
    const token = (i: number) => ({
      token: `w${i}`,
      logprob: -1.5,
      bytes: [119, 49],
      top_logprobs: Array.from({ length: 5 }, (_, k) => ({
        token: `t${k}`,
        logprob: -2,
        bytes: [116],
      })),
    });
    const choice = {
      index: 0,
      finish_reason: "stop",
      message: { role: "assistant", content: "w ".repeat(500) },
      logprobs: { content: Array.from({ length: 500 }, (_, i) => token(i)) },
    };
    const trajectories = Array.from({ length: 80 }, (_, k) => ({
      messages_and_choices: [{ role: "user", content: "hi" }, choice],
      reward: k % 2,
    }));
    const body = JSON.stringify({
      split: "val",
      trajectory_groups: [{ trajectories }, { trajectories }],
    });
    expect(body.length).toBeGreaterThan(20_000_000);
    const r = await post(emu, `/preview/models/${m.id}/log`, body);
    expect(r.status).toBe(200);
    expect(r.json.num_trajectories).toBe(160);
  } finally {
    await emu.close();
  }
});

it("bounds n, max_tokens, max_completion_tokens and top_logprobs with 400s in OpenAI's shape", async () => {
  const emu = await start();
  const base = { model: "toy", messages: [{ role: "user", content: "hi" }] };
  try {
    const cases: [Record<string, unknown>, string][] = [
      [{ n: 5_000_000 }, "n"],
      [{ max_tokens: 10_000_000 }, "max_tokens"],
      [{ max_completion_tokens: 100_000 }, "max_completion_tokens"],
      [{ n: 128, max_tokens: 30_000 }, "max_tokens"],
      [{ logprobs: true, top_logprobs: 1000 }, "top_logprobs"],
    ];
    for (const [extra, param] of cases) {
      const r = await call(emu, "POST", "/chat/completions", { ...base, ...extra });
      expect(r.status, param).toBe(400);
      expect(r.json.error).toMatchObject({ param, type: "invalid_request_error" });
      expect(r.json.error.message).toMatch(new RegExp(`${param}.* must be at most|${param} must`));
    }
    const fine = await call(emu, "POST", "/chat/completions", { ...base, n: 4, max_tokens: 500 });
    expect(fine.status).toBe(200);
    expect(fine.json.choices).toHaveLength(4);
  } finally {
    await emu.close();
  }
});

it("answers 400 to a request target that is not a URL path, and keeps serving", async () => {
  const emu = await start();
  try {
    const status = await new Promise<number>((resolve, reject) => {
      const req = request({ host: "127.0.0.1", port: emu.port, path: "//a:b/v1/health" });
      req.on("response", (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on("error", reject);
      req.end();
    });
    expect(status).toBe(400);
    expect((await call(emu, "GET", "/health")).status).toBe(200);
  } finally {
    await emu.close();
  }
});

it("refuses a prompt past its 4,096-token context with OpenAI's 400 context_length_exceeded, however long, and serves one that fits", async () => {
  const emu = await start();
  try {
    const ask = (content: string, extra: object = {}) =>
      call(emu, "POST", "/chat/completions", {
        model: "emulator/tiny",
        messages: [{ role: "user", content }],
        max_tokens: 3,
        ...extra,
      });
    const fits = await ask("word ".repeat(4000));
    expect(fits.status).toBe(200);
    expect(fits.json.usage.prompt_tokens).toBe(4005);
    // 5 template tokens around the words: 4,091 words fill the context exactly.
    for (const words of [4091, 5000, 130_000, 2_000_000]) {
      const r = await ask("word ".repeat(words));
      expect(r.status, String(words)).toBe(400);
      expect(r.json.error).toMatchObject({
        type: "invalid_request_error",
        code: "context_length_exceeded",
        param: "messages",
      });
      expect(r.json.error.message).toContain("maximum context length is 4096 tokens");
      expect(r.json.error.message).toContain(`resulted in ${words + 5} tokens`);
    }
  } finally {
    await emu.close();
  }
});

it("answers a turn whose tool-call arguments nest 50,000 deep (read as text, not walked), with and without drift", async () => {
  for (const drift of [{}, { toolArguments: true }]) {
    const emu = await start({ drift });
    try {
      const deep = `${"[".repeat(50_000)}${"]".repeat(50_000)}`;
      const r = await call(emu, "POST", "/chat/completions", {
        model: "emulator/tiny",
        max_tokens: 3,
        messages: [
          { role: "user", content: "hi" },
          {
            role: "assistant",
            content: null,
            tool_calls: [
              { id: "c1", type: "function", function: { name: "look", arguments: deep } },
            ],
          },
          { role: "tool", tool_call_id: "c1", content: "ok" },
        ],
        tools: [{ type: "function", function: { name: "look", parameters: { type: "object" } } }],
      });
      expect(r.status, JSON.stringify(r.json).slice(0, 200)).toBe(200);
    } finally {
      await emu.close();
    }
  }
});
