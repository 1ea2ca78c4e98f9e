// A loopback server that answers Anthropic's POST /v1/messages as the API
// does: a message as JSON, or (stream: true) the server-sent events the
// Anthropic SDKs rebuild it from. It keeps each request's headers and body.
import { createServer, type IncomingHttpHeaders, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";

type Block = Record<string, unknown>;

export interface MessagesUpstream {
  /** The root URL, as an Anthropic SDK takes it (it adds /v1/messages). */
  root: string;
  /** The base URL ending in /v1, as the recorder's upstream takes it. */
  baseURL: string;
  requests: Array<{ path: string; headers: IncomingHttpHeaders; body: Block }>;
  close(): Promise<void>;
}

/** The tool loop every agent of these tests runs: add, then say the sum. */
export function toolLoopAnswer(body: Block): { content: Block[]; stop_reason: string } {
  const messages = body.messages as Array<{ role: string; content: unknown }>;
  const last = messages.at(-1)?.content;
  const answered = Array.isArray(last) && last.some((b) => (b as Block)?.type === "tool_result");
  return answered
    ? { content: [{ type: "text", text: "It is 5." }], stop_reason: "end_turn" }
    : {
        content: [
          { type: "text", text: "Let me add them." },
          { type: "tool_use", id: "toolu_1", name: "add", input: { a: 2, b: 3 } },
        ],
        stop_reason: "tool_use",
      };
}

async function readJson(req: IncomingMessage): Promise<Block> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString("utf8"));
}

function pieces(text: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += 4) out.push(text.slice(i, i + 4));
  return out;
}

/** A message's events, in the order the API sends them. */
function events(message: Block): Block[] {
  const content = message.content as Block[];
  const list: Block[] = [
    {
      type: "message_start",
      message: {
        ...message,
        content: [],
        stop_reason: null,
        usage: { input_tokens: 12, output_tokens: 1 },
      },
    },
  ];
  content.forEach((block, index) => {
    if (block.type === "text") {
      list.push({ type: "content_block_start", index, content_block: { type: "text", text: "" } });
      for (const text of pieces(String(block.text)))
        list.push({ type: "content_block_delta", index, delta: { type: "text_delta", text } });
    } else {
      list.push({ type: "content_block_start", index, content_block: { ...block, input: {} } });
      for (const partial_json of pieces(JSON.stringify(block.input)))
        list.push({
          type: "content_block_delta",
          index,
          delta: { type: "input_json_delta", partial_json },
        });
    }
    list.push({ type: "content_block_stop", index });
  });
  list.push({
    type: "message_delta",
    delta: { stop_reason: message.stop_reason, stop_sequence: null },
    usage: { output_tokens: 9 },
  });
  list.push({ type: "message_stop" });
  return list;
}

export async function startMessagesUpstream(
  answer: (body: Block, n: number) => { content: Block[]; stop_reason: string } = toolLoopAnswer,
): Promise<MessagesUpstream> {
  const requests: MessagesUpstream["requests"] = [];
  const server = createServer(async (req, res) => {
    const body: Block = await readJson(req).catch(() => ({}));
    const n = requests.push({ path: req.url ?? "", headers: req.headers, body }) - 1;
    if (req.method !== "POST" || req.url !== "/v1/messages") {
      res.writeHead(404, { "content-type": "application/json" });
      res.end(JSON.stringify({ type: "error", error: { type: "not_found_error", message: "no" } }));
      return;
    }
    const message = {
      id: `msg_${n + 1}`,
      type: "message",
      role: "assistant",
      model: String(body.model),
      stop_sequence: null,
      usage: { input_tokens: 12, output_tokens: 9 },
      ...answer(body, n),
    };
    const headers = { "request-id": `req_${n + 1}`, "anthropic-organization-id": "org_1" };
    if (body.stream !== true) {
      res.writeHead(200, { "content-type": "application/json", ...headers });
      res.end(JSON.stringify(message));
      return;
    }
    res.writeHead(200, { "content-type": "text/event-stream", ...headers });
    for (const event of events(message))
      res.write(`event: ${String(event.type)}\ndata: ${JSON.stringify(event)}\n\n`);
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const root = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    root,
    baseURL: `${root}/v1`,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}
