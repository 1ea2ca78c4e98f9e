import { type Emulator, startEmulator } from "../../src/emulator/index.js";

export const KEY = "test-key";

export async function start(extra: Parameters<typeof startEmulator>[0] = {}): Promise<Emulator> {
  return startEmulator({ port: 0, apiKeys: { [KEY]: "alice", other: "bob" }, ...extra });
}

export async function call(
  emu: Emulator,
  method: string,
  path: string,
  body?: unknown,
  key: string | null = KEY,
): Promise<{ status: number; json: any }> {
  const res = await fetch(`${emu.url}${path}`, {
    method,
    headers: {
      ...(key ? { authorization: `Bearer ${key}` } : {}),
      ...(body !== undefined ? { "content-type": "application/json" } : {}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined };
}

export async function createModel(emu: Emulator, name = "agent", project = "demo") {
  const r = await call(emu, "POST", "/preview/models", {
    project,
    name,
    base_model: "emulator/tiny",
  });
  if (r.status !== 200) throw new Error(JSON.stringify(r.json));
  return r.json as { id: string; entity: string; project: string; name: string };
}

export async function waitForJob(emu: Emulator, jobId: string) {
  const events: any[] = [];
  for (let i = 0; i < 500; i++) {
    const after = events.at(-1)?.id;
    const q = after ? `?after=${after}&limit=100` : "?limit=100";
    const r = await call(emu, "GET", `/preview/training-jobs/${jobId}/events${q}`);
    events.push(...r.json.data);
    if (events.some((e) => e.type === "training_ended" || e.type === "training_failed"))
      return events;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error("job did not finish");
}

/** The recommended toy task: the user names a word; reward 1 when the answer contains it. */
export const TARGETS = ["red", "cat", "apple", "two"];
export function reward(target: string, content: string | null): number {
  return (content ?? "").split(/\s+/).includes(target) ? 1 : 0;
}
