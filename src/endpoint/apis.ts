// The APIs the recording endpoint records, each as what differs between
// them: its path, the fields its body must hold, what its answer is, where
// its stream ends, how progress is read, and which method of the recorder's
// wrapped client sends it. The flow around them (keys, bodies, forwarding,
// receipts) is one, in recording.ts.
import type OpenAI from "openai";
import type { z } from "zod";
import { type AnswerShape, CHAT_ANSWER, type Strip, stripFor } from "./agent-answer.js";
import {
  RecordableChatBody,
  RecordableMessagesBody,
  RecordableResponsesBody,
} from "./chat-body.js";
import { CHAT_STREAM_ENDS } from "./forward.js";
import {
  ChatProgress,
  MessagesProgress,
  type ProgressReader,
  ResponsesProgress,
} from "./progress-readers.js";
import type { UpstreamClient } from "./upstream.js";

/** What the SDK method is sent with. */
export interface SendOptions {
  headers: Record<string, string>;
  signal: AbortSignal;
}

/** The clients an API's call may go through (the recorder's wrapped ones). */
export type ApiClients = Pick<UpstreamClient, "openai" | "model" | "anthropic" | "anthropicAuth">;

/** One recorded API. */
export interface RecordedApi {
  /** The route, e.g. `/v1/responses`. */
  path: string;
  /** The body's fields the recorder reads. */
  body: z.ZodType;
  /** The 2xx answer, read whole. */
  answer: AnswerShape;
  /** What the agent did not ask for and is not handed. */
  strip(body: Record<string, unknown>): Strip | undefined;
  /** Markers of a stream's last event. */
  ends: readonly Buffer[];
  /** A reader of its stream's events for progress. */
  progress(): ProgressReader;
  /**
   * The wrapped client's method that sends the call (and so records it),
   * or why the clients cannot send it. `create()` must be called at once
   * by the caller, inside the rollout, to number the call.
   */
  sender(clients: ApiClients): Promise<Sender | { missing: string }>;
  /**
   * The header that carries the upstream's key, when it is not the SDK's
   * own choice: it replaces whatever credential the SDK sent.
   */
  upstreamAuth?(clients: ApiClients): Record<string, string>;
}

/** Sends one call through a wrapped client. */
export type Sender = (body: Record<string, unknown>, options: SendOptions) => unknown;

/** Markers of an SSE event of `type`, as servers write it (with or without an `event:` line, compact or spaced JSON). */
function eventMarkers(...types: string[]): Buffer[] {
  return types.flatMap((t) => [
    Buffer.from(`event: ${t}\n`),
    Buffer.from(`event: ${t}\r\n`),
    Buffer.from(`"type":"${t}"`),
    Buffer.from(`"type": "${t}"`),
  ]);
}

/** `POST /v1/chat/completions`. */
export const CHAT_API: RecordedApi = {
  path: "/v1/chat/completions",
  body: RecordableChatBody,
  answer: CHAT_ANSWER,
  strip: stripFor,
  ends: CHAT_STREAM_ENDS,
  progress: () => new ChatProgress(),
  sender: async (clients) => (body, options) =>
    clients.openai.chat.completions.create(body as never, options),
};

/** `POST /v1/responses`: recorded as plain assistant messages (the API gives no token ids). */
export const RESPONSES_API: RecordedApi = {
  path: "/v1/responses",
  body: RecordableResponsesBody,
  answer: { noun: "Responses API response", list: "output" },
  // Nothing is added to a Responses request, so nothing is taken out of its answer.
  strip: () => undefined,
  ends: eventMarkers("response.completed", "response.incomplete", "response.failed"),
  progress: () => new ResponsesProgress(),
  sender: async (clients) =>
    // openai 4 before 4.87 has no `responses`.
    typeof (clients.openai as Partial<OpenAI>).responses?.create === "function"
      ? (body, options) =>
          clients.openai.responses.create(withModel(body, clients.model) as never, options)
      : {
          missing:
            "the openai package installed beside trajectory-recorder has no Responses API (openai 4.87 or later has it)",
        },
};

/**
 * Anthropic's `POST /v1/messages`, with its headers (`x-api-key`,
 * `anthropic-version`, `anthropic-beta`): recorded as plain assistant
 * messages, through the recorder's wrapped `@anthropic-ai/sdk` client.
 */
export const MESSAGES_API: RecordedApi = {
  path: "/v1/messages",
  body: RecordableMessagesBody,
  answer: { noun: "Messages API message", list: "content" },
  strip: () => undefined,
  ends: eventMarkers("message_stop"),
  progress: () => new MessagesProgress(),
  sender: async (clients) => {
    const made = await clients.anthropic();
    if ("missing" in made) return made;
    // The client has its timeout (the endpoint's), so the SDK does not
    // refuse an unstreamed call with a large max_tokens as too long.
    return (body, options) => made.client.messages.create(withModel(body, clients.model), options);
  },
  upstreamAuth: (clients) => clients.anthropicAuth,
};

/** `body` with the upstream's model where it names none (`model: ""`), as chat calls get it. */
function withModel(body: Record<string, unknown>, model: string | undefined) {
  return model && !body.model ? { ...body, model } : body;
}
