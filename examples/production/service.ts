// A small chat service that records its production traffic: every
// conversation is a session of the recording proxy (one trajectory each),
// stored on disk, and each answer comes with a signed feedback URL that the
// page's thumbs buttons post to, straight from the browser and holding no key.
// The model is the emulator's, so this runs offline.
import { randomBytes } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import OpenAI from "openai";
import { startEmulator } from "trajectory-recorder/emulator";
import { startRecordingProxy } from "trajectory-recorder/proxy";
import { TrajectoryStore } from "trajectory-recorder/store";
import { startFlakyUpstream } from "./flaky.js";
import { PAGE } from "./page.js";

/** What {@link startChatService} takes. */
export interface ChatServiceOptions {
  /** The service's port; 0 (the default) picks a free one. */
  port?: number;
  /** The store's directory. Default: a new temporary one. */
  storeDir?: string;
  /** The model the chat calls name at first. Default `"toy"`, the emulator's untrained base. */
  model?: string;
  /**
   * The fraction of the model server's chat calls answered 503, as a fleet
   * of preempted nodes would (seeded by `seed`); the client retries them and
   * the proxy marks their sessions as infrastructure failures. Default 0.
   */
  flakyRate?: number;
  /** Seeds the flaky upstream. Default 1. */
  seed?: number;
  /** Where the emulator keeps its state (its jobs, what they were sent). Default: in memory. */
  emulatorDataDir?: string;
}

/** A running chat service. */
export interface ChatService {
  /** The page and the chat API, e.g. `http://127.0.0.1:8080`. */
  url: string;
  /** The recording proxy's root URL (feedback, trajectories). */
  proxyURL: string;
  /** The key of the proxy's control API: the service's own, never sent to a page. */
  controlKey: string;
  storeDir: string;
  store: TrajectoryStore;
  /** The emulator's base URL and key: where a trainer registers and trains the model. */
  emulator: { url: string; apiKey: string };
  /** The model the chat calls name now. */
  model(): string;
  /** Switches the chat to another model (a new checkpoint): the next call names it. */
  setModel(name: string): void;
  /** How many chat calls the flaky upstream failed on purpose. */
  infraFailures(): number;
  close(): Promise<void>;
}

/** The answer of `POST /chat`. */
export interface ChatAnswer {
  answer: string;
  /** The receipt: the id of this conversation's trajectory. */
  trajectory_id: string;
  /** Where a thumbs up or down is posted, with no key: `{ "reward": 1 }`. */
  feedback_url: string;
}

type Message = OpenAI.Chat.ChatCompletionMessageParam;

const SYSTEM: Message = { role: "system", content: "You are a helpful assistant. Answer briefly." };

export async function startChatService(options: ChatServiceOptions = {}): Promise<ChatService> {
  const emulatorKey = `emu-${randomBytes(12).toString("hex")}`;
  const controlKey = `ctl-${randomBytes(16).toString("hex")}`;
  const storeDir = options.storeDir ?? mkdtempSync(path.join(tmpdir(), "production-example-"));

  // The page comes from this server and posts feedback to the proxy's port:
  // the proxy must allow this origin, so the server listens first.
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const emulator = await startEmulator({
    port: 0,
    apiKeys: [emulatorKey],
    ...(options.emulatorDataDir ? { dataDir: options.emulatorDataDir } : {}),
  });
  const flaky = await startFlakyUpstream(
    emulator.url,
    options.flakyRate ?? 0,
    mulberry32(options.seed ?? 1),
  );
  const store = await TrajectoryStore.open({ dir: storeDir });
  const proxy = await startRecordingProxy({
    upstream: { baseURL: flaky.baseURL, apiKey: emulatorKey },
    apiKey: controlKey,
    store,
    feedback: { allowedOrigins: [url] },
    port: 0,
  });

  let model = options.model ?? "toy";
  const histories = new Map<string, Message[]>();
  const control = (route: string, body: unknown) =>
    fetch(`${proxy.url}${route}`, {
      method: "POST",
      headers: { authorization: `Bearer ${controlKey}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });

  const chat = async (session: string, message: string): Promise<ChatAnswer> => {
    const openai = new OpenAI({
      baseURL: proxy.baseURL,
      apiKey: controlKey,
      // A preempted node answers 503; the client tries again, as it would in production.
      maxRetries: 5,
      defaultHeaders: { "x-trajectory-session": session },
    });
    const history = histories.get(session) ?? [SYSTEM];
    const messages: Message[] = [...history, { role: "user", content: message }];
    const { data, response } = await openai.chat.completions
      .create({ model, messages, max_tokens: 24, seed: seedOf(session, messages.length) })
      .withResponse();
    const answer = data.choices[0]?.message.content ?? "";
    histories.set(session, [...messages, { role: "assistant", content: answer }]);
    const trajectoryId = response.headers.get("x-trajectory-id");
    if (!trajectoryId) throw new Error("the proxy's answer has no x-trajectory-id header");
    const signed = await control(`/v1/trajectories/${trajectoryId}/feedback-url`, {
      fields: ["reward"],
      expires_in: 3600,
    });
    if (!signed.ok)
      throw new Error(`feedback-url answered ${signed.status}: ${await signed.text()}`);
    const { url: feedbackURL } = (await signed.json()) as { url: string };
    return { answer, trajectory_id: trajectoryId, feedback_url: feedbackURL };
  };

  const end = async (session: string): Promise<void> => {
    histories.delete(session);
    const r = await control(`/v1/sessions/${encodeURIComponent(session)}/end`, {});
    if (!r.ok && r.status !== 404) throw new Error(`ending ${session} answered ${r.status}`);
  };

  server.on("request", (req, res) => {
    route(req, res, { chat, end }).catch((error: unknown) => {
      if (!res.headersSent) send(res, 500, { error: { message: String(error) } });
      else res.destroy();
    });
  });

  return {
    url,
    proxyURL: proxy.url,
    controlKey,
    storeDir,
    store,
    emulator: { url: emulator.url, apiKey: emulatorKey },
    model: () => model,
    setModel: (name) => {
      model = name;
    },
    infraFailures: () => flaky.failed(),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await proxy.close();
      await store.close();
      await flaky.close();
      await emulator.close();
    },
  };
}

interface Handlers {
  chat(session: string, message: string): Promise<ChatAnswer>;
  end(session: string): Promise<void>;
}

const SESSION = /^[A-Za-z0-9._:-]{1,200}$/;

async function route(req: IncomingMessage, res: ServerResponse, h: Handlers): Promise<void> {
  const { pathname } = new URL(req.url ?? "/", "http://localhost");
  if (req.method === "GET" && pathname === "/") {
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    res.end(PAGE);
    return;
  }
  if (req.method === "POST" && (pathname === "/chat" || pathname === "/end")) {
    const body = await readBody(req);
    const session = body?.session;
    if (typeof session !== "string" || !SESSION.test(session)) {
      send(res, 400, { error: { message: "session must be 1-200 of A-Z a-z 0-9 . _ : -" } });
      return;
    }
    if (pathname === "/end") {
      await h.end(session);
      send(res, 200, { ended: session });
      return;
    }
    const message = body?.message;
    if (typeof message !== "string" || message.trim() === "" || message.length > 4000) {
      send(res, 400, {
        error: { message: "message must be a non-empty string (at most 4,000 characters)" },
      });
      return;
    }
    send(res, 200, await h.chat(session, message));
    return;
  }
  send(res, 404, { error: { message: `no route ${req.method} ${pathname}` } });
}

async function readBody(req: IncomingMessage): Promise<Record<string, unknown> | undefined> {
  let text = "";
  for await (const chunk of req) {
    text += chunk;
    if (text.length > 64 * 1024) return undefined;
  }
  try {
    const value = JSON.parse(text) as unknown;
    return typeof value === "object" && value !== null
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

/** A sampling seed per conversation and turn, so a run of simulated users can be repeated. */
function seedOf(session: string, turn: number): number {
  let h = turn >>> 0;
  for (const ch of session) h = Math.imul(h ^ ch.charCodeAt(0), 0x01000193) >>> 0;
  return h % 2_147_483_647;
}

/** A small seeded generator, so a run can be repeated. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
