// A loopback server that answers POST /v1/responses as the Responses API
// does: a response object as JSON, or (stream: true) the server-sent events
// the openai SDK's stream helpers rebuild it from, deltas in small pieces.
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";

type Item = Record<string, unknown>;

export interface ResponsesServer {
  baseURL: string;
  /** The request bodies, in order. */
  requests: Item[];
  close(): Promise<void>;
}

export interface ResponsesServerOptions {
  /** The output items (and optional fields) to answer the nth request (from 0) with. */
  answer: (body: Item, n: number) => { output: Item[]; status?: string; model?: string };
  /** Answer the nth request with this HTTP error status instead. */
  failWith?: (n: number) => number | undefined;
  /** End the nth streamed answer before its terminal event (a cut connection). */
  cutStream?: (n: number) => boolean;
}

async function readJson(req: IncomingMessage): Promise<Item> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString("utf8"));
}

function responseObject(
  n: number,
  body: Item,
  answer: ReturnType<ResponsesServerOptions["answer"]>,
) {
  return {
    id: `resp_${n + 1}`,
    object: "response",
    created_at: 1_700_000_000 + n,
    status: answer.status ?? "completed",
    model: answer.model ?? String(body.model ?? "teacher"),
    output: answer.output,
    parallel_tool_calls: true,
    tool_choice: "auto",
    tools: body.tools ?? [],
    error: null,
    incomplete_details: null,
    instructions: body.instructions ?? null,
    metadata: {},
    temperature: 1,
    top_p: 1,
    usage: { input_tokens: 11, output_tokens: 7, total_tokens: 18 },
  };
}

/** Splits text into pieces of up to 3 characters, as a model streams tokens. */
function pieces(text: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += 3) out.push(text.slice(i, i + 3));
  return out;
}

/** The events of a streamed response, in the order the API sends them. */
function events(response: ReturnType<typeof responseObject>, cut: boolean): Item[] {
  const list: Item[] = [];
  const shell = { ...response, status: "in_progress", output: [] as Item[], usage: null };
  list.push({ type: "response.created", response: shell });
  response.output.forEach((item, output_index) => {
    const item_id = String(item.id);
    if (item.type === "message") {
      list.push({
        type: "response.output_item.added",
        output_index,
        item: { ...item, content: [] },
      });
      (item.content as Item[]).forEach((part, content_index) => {
        const text = String(part.text ?? "");
        const at = { item_id, output_index, content_index };
        list.push({ type: "response.content_part.added", ...at, part: { ...part, text: "" } });
        for (const delta of pieces(text))
          list.push({ type: "response.output_text.delta", ...at, delta, logprobs: [] });
        list.push({ type: "response.output_text.done", ...at, text, logprobs: [] });
        list.push({ type: "response.content_part.done", ...at, part });
      });
    } else if (item.type === "function_call") {
      const args = String(item.arguments);
      list.push({
        type: "response.output_item.added",
        output_index,
        item: { ...item, arguments: "" },
      });
      for (const delta of pieces(args))
        list.push({ type: "response.function_call_arguments.delta", item_id, output_index, delta });
      list.push({
        type: "response.function_call_arguments.done",
        item_id,
        output_index,
        arguments: args,
      });
    } else list.push({ type: "response.output_item.added", output_index, item });
    list.push({ type: "response.output_item.done", output_index, item });
  });
  if (!cut) list.push({ type: `response.${response.status}`, response });
  return list.map((e, sequence_number) => ({ ...e, sequence_number }));
}

export async function startResponsesServer(
  options: ResponsesServerOptions,
): Promise<ResponsesServer> {
  const requests: Item[] = [];
  const server = createServer(async (req, res) => {
    if (req.method !== "POST" || !req.url?.endsWith("/responses")) {
      res.writeHead(404).end();
      return;
    }
    const body = await readJson(req);
    const n = requests.push(body) - 1;
    const status = options.failWith?.(n);
    if (status) {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: "upstream trouble", type: "server_error" } }));
      return;
    }
    const response = responseObject(n, body, options.answer(body, n));
    if (body.stream !== true) {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(response));
      return;
    }
    res.writeHead(200, { "content-type": "text/event-stream" });
    for (const event of events(response, options.cutStream?.(n) ?? false))
      res.write(`event: ${String(event.type)}\ndata: ${JSON.stringify(event)}\n\n`);
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}

/** The function call both Responses tests' loops answer with first. */
export const functionCall = {
  type: "function_call",
  id: "fc_1",
  call_id: "call_1",
  name: "add",
  arguments: '{"a":2,"b":3}',
  status: "completed",
};

/** An assistant message output item holding `text`. */
export const message = (text: string) => ({
  type: "message",
  id: "msg_1",
  role: "assistant",
  status: "completed",
  content: [{ type: "output_text", text, annotations: [] }],
});

/** The strict `add` function tool those loops offer. */
export const tools = [
  {
    type: "function" as const,
    name: "add",
    description: "Adds two numbers.",
    parameters: {
      type: "object",
      properties: { a: { type: "number" }, b: { type: "number" } },
      required: ["a", "b"],
      additionalProperties: false,
    },
    strict: true,
  },
];
