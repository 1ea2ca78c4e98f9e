// The one HTTP server and its plumbing: the route table (parameters, 405 with
// allow, the fallback), errors in OpenAI's shape with x-should-retry, capped
// request bodies, and a streamed answer's progress as the store gets it.
import { describe, expect, it } from "vitest";
import { EndpointServer, SseProgress } from "../../src/endpoint/index.js";
import { readRequestBody, sendError, sendJson } from "../../src/util/http.js";

async function serve(server: EndpointServer, run: (url: string) => Promise<void>) {
  await server.start();
  try {
    await run(server.url);
  } finally {
    await server.close();
  }
}

describe("EndpointServer", () => {
  it("routes by method and path with parameters, answers 405 with allow, and hands the rest to the fallback", async () => {
    const warnings: string[] = [];
    const server = new EndpointServer({
      host: "127.0.0.1",
      port: 0,
      logger: { warn: (m) => warnings.push(m) },
      redact: (t) => t.replaceAll("sk-secret-123", "[redacted]"),
    })
      .add([
        {
          method: "GET",
          path: "/items/:id",
          handle: ({ res, params, query }) =>
            sendJson(res, 200, { id: params.id, q: query.get("q") }),
        },
        {
          method: "POST",
          path: "/items/:id",
          handle: () => {
            throw new Error("boom with sk-secret-123");
          },
        },
      ])
      .setFallback(({ res, path }) => sendJson(res, 404, { missing: path }));
    await serve(server, async (url) => {
      const got = await fetch(`${url}/items/a%20b?q=1`);
      expect(await got.json()).toEqual({ id: "a b", q: "1" });
      const wrong = await fetch(`${url}/items/a`, { method: "DELETE" });
      expect(wrong.status).toBe(405);
      expect(wrong.headers.get("allow")).toBe("GET, POST");
      const none = await fetch(`${url}/other`);
      expect(await none.json()).toEqual({ missing: "/other" });
      const failed = await fetch(`${url}/items/a`, { method: "POST" });
      expect(failed.status).toBe(500);
      expect(warnings.join("\n")).toContain("[redacted]");
      expect(warnings.join("\n")).not.toContain("sk-secret-123");
    });
  });

  it("reads bodies up to the cap, and answers errors in OpenAI's shape with x-should-retry", async () => {
    const server = new EndpointServer({ host: "127.0.0.1", port: 0, logger: console }).add([
      {
        method: "POST",
        path: "/body",
        handle: async ({ req, res }) => {
          const body = await readRequestBody(req, 10);
          if (!body) sendError(res, 413, "too big", "invalid_request_error", "request_too_large");
          else sendJson(res, 200, { size: body.length });
        },
      },
      {
        method: "GET",
        path: "/busy",
        handle: ({ res }) => sendError(res, 503, "busy", "server_error", null, null, { extra: 1 }),
      },
    ]);
    await serve(server, async (url) => {
      expect(
        await (await fetch(`${url}/body`, { method: "POST", body: "0123456789" })).json(),
      ).toEqual({ size: 10 });
      const big = await fetch(`${url}/body`, { method: "POST", body: "0123456789a" });
      expect(big.status).toBe(413);
      expect(big.headers.get("x-should-retry")).toBe("false");
      expect(await big.json()).toEqual({
        error: {
          message: "too big",
          type: "invalid_request_error",
          param: null,
          code: "request_too_large",
        },
      });
      const busy = await fetch(`${url}/busy`);
      expect(busy.headers.get("x-should-retry")).toBe("true");
      expect(((await busy.json()) as any).error.extra).toBe(1);
    });
  });
});

describe("SseProgress", () => {
  const event = (delta: object) =>
    `data: ${JSON.stringify({ choices: [{ index: 0, delta }] })}\n\n`;

  it("hands the store the answer so far, at most every 250 ms, split events included", async () => {
    const written: any[] = [];
    const progress = new SseProgress((p) => written.push(p));
    const text = [
      event({ role: "assistant", content: "Hel" }),
      event({ content: "lo", reasoning_content: "think" }),
      event({
        tool_calls: [
          { index: 0, id: "call_1", type: "function", function: { name: "f", arguments: '{"a"' } },
        ],
      }),
      event({ tool_calls: [{ index: 0, function: { arguments: ":1}" } }] }),
    ].join("");
    const bytes = Buffer.from(text);
    progress.add(bytes.subarray(0, 30));
    expect(written).toHaveLength(0);
    await new Promise((r) => setTimeout(r, 260));
    progress.add(bytes.subarray(30, bytes.length - 7));
    await new Promise((r) => setTimeout(r, 260));
    progress.add(bytes.subarray(bytes.length - 7));
    expect(written).toHaveLength(2);
    expect(written[1]).toEqual({
      content: "Hello",
      reasoning: "think",
      tool_calls: [
        { id: "call_1", type: "function", function: { name: "f", arguments: '{"a":1}' } },
      ],
    });
  });
});
