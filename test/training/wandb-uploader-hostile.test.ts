// WandbArtifactUploader against servers that misbehave: it never shows the
// key in any form, gives up on time, reads answers only up to a cap, checks
// their shape, and sends the key only to https or this machine.
import { once } from "node:events";
import {
  createServer as createHttp,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from "node:http";
import { createServer as createTcp } from "node:net";
import { inspect } from "node:util";
import { PresignedUrlUploader, WandbArtifactUploader } from "trajectory-recorder";
import { type Emulator, startEmulator } from "trajectory-recorder/emulator";
import { WandbApiError } from "trajectory-recorder/errors";
import { afterEach, describe, expect, it } from "vitest";

const KEY = "sk-wandb-0123456789abcdef";
const FORMS = [
  KEY,
  Buffer.from(`api:${KEY}`).toString("base64"),
  Buffer.from(`api:${KEY}`).toString("base64").replace(/=+$/, ""),
  Buffer.from(KEY).toString("base64"),
];
const artifact = {
  name: "data.jsonl",
  data: '{"messages":[]}\n',
  contentType: "application/jsonl",
  owner: { entity: "e", project: "p", run: "r" },
};
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (closers.length) await closers.pop()?.();
});

async function serve(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<string> {
  const server: Server = createHttp(handler);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  closers.push(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });
  const { port } = server.address() as { port: number };
  return `http://127.0.0.1:${port}`;
}

function expectNoKey(text: string) {
  for (const form of FORMS) expect(text).not.toContain(form);
}

describe("the key, in every form", () => {
  it("is redacted from errors when the server echoes the Authorization header back", async () => {
    const baseUrl = await serve((req, res) => {
      const auth = req.headers.authorization ?? "";
      const raw = Buffer.from(auth.replace(/^Basic /, ""), "base64").toString();
      res.writeHead(400, { "content-type": "text/plain" });
      res.end(
        `bad request with ${auth} (decoded ${raw}; bearer Bearer ${KEY}; url ${encodeURIComponent(KEY)})`,
      );
    });
    const uploader = new WandbArtifactUploader({ apiKey: KEY, baseUrl, maxAttempts: 1 });
    const error = await uploader.upload(artifact).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WandbApiError);
    expect((error as WandbApiError).status).toBe(400);
    expect(String((error as Error).message)).toContain("[redacted]");
    expectNoKey(String((error as Error).message));
    expectNoKey(inspect(error, { depth: 5 }));
  });

  it("is redacted from GraphQL error messages", async () => {
    const baseUrl = await serve((req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({ errors: [{ message: `key ${req.headers.authorization} refused` }] }),
      );
    });
    const uploader = new WandbArtifactUploader({ apiKey: KEY, baseUrl, maxAttempts: 1 });
    const error = (await uploader.upload(artifact).catch((e: unknown) => e)) as Error;
    expect(error.message).toMatch(/^W&B UpsertBucket failed: key Basic \[redacted\] refused\.$/);
  });

  it("never shows in inspect() or JSON of the uploader", () => {
    const uploader = new WandbArtifactUploader({
      apiKey: KEY,
      baseUrl: "https://user:pw@api.example",
    });
    const shown = inspect(uploader, { depth: 10, showHidden: true });
    expectNoKey(shown);
    expect(shown).not.toContain("pw@");
    expectNoKey(JSON.stringify(uploader));
  });
});

describe("deadlines", () => {
  it("gives up on a server that never answers, naming the deadline", async () => {
    const baseUrl = await serve(() => {});
    const uploader = new WandbArtifactUploader({
      apiKey: KEY,
      baseUrl,
      maxAttempts: 1,
      timeouts: { headersMs: 150 },
    });
    await expect(uploader.upload(artifact)).rejects.toThrow(
      "W&B UpsertBucket timed out: no answer headers within 150 ms (timeouts.headersMs).",
    );
  });

  it("gives up on a server that trickles its answer, within the whole-request deadline", async () => {
    const baseUrl = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write("{");
      const timer = setInterval(() => res.write(" "), 20);
      res.on("close", () => clearInterval(timer));
    });
    const uploader = new WandbArtifactUploader({
      apiKey: KEY,
      baseUrl,
      maxAttempts: 1,
      timeouts: { requestMs: 300 },
    });
    const started = Date.now();
    await expect(uploader.upload(artifact)).rejects.toThrow(
      "W&B UpsertBucket timed out: the whole request took over 300 ms (timeouts.requestMs).",
    );
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it("gives up on a connection that never completes its TLS handshake, within the connect deadline", async () => {
    const sockets = new Set<import("node:net").Socket>();
    // Accepts, then says nothing: no TLS handshake ever completes.
    const tcp = createTcp((socket) => {
      sockets.add(socket);
    });
    tcp.listen(0, "127.0.0.1");
    await once(tcp, "listening");
    closers.push(async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((r) => tcp.close(r));
    });
    const { port } = tcp.address() as { port: number };
    const uploader = new WandbArtifactUploader({
      apiKey: KEY,
      baseUrl: `https://127.0.0.1:${port}`,
      maxAttempts: 1,
      timeouts: { connectMs: 150 },
    });
    await expect(uploader.upload(artifact)).rejects.toThrow(
      "W&B UpsertBucket timed out: no connection within 150 ms (timeouts.connectMs).",
    );
  });
});

describe("answers", () => {
  it("are read only up to maxAnswerBytes, declared or streamed", async () => {
    const baseUrl = await serve((req, res) => {
      if (req.url?.includes("declared")) {
        res.writeHead(200, { "content-length": String(300 * 1024 * 1024) });
        res.write("{");
        return;
      }
      res.writeHead(200, { "content-type": "application/json" });
      const chunk = Buffer.alloc(64 * 1024, 32);
      const timer = setInterval(() => res.write(chunk), 1);
      res.on("close", () => clearInterval(timer));
    });
    for (const path of ["/declared", "/streamed"]) {
      const uploader = new WandbArtifactUploader({
        apiKey: KEY,
        baseUrl: `${baseUrl}${path}`,
        maxAttempts: 1,
        maxAnswerBytes: 1024 * 1024,
      });
      await expect(uploader.upload(artifact)).rejects.toThrow(
        "W&B UpsertBucket answered more than 1048576 bytes (maxAnswerBytes); nothing past that was read.",
      );
    }
  });

  it("of the wrong shape fail naming the field, not with a TypeError", async () => {
    const baseUrl = await serve((req, res) => {
      let body = "";
      req.on("data", (c) => {
        body += c;
      });
      req.on("end", () => {
        const op = JSON.parse(body).operationName;
        res.writeHead(200, { "content-type": "application/json" });
        const data =
          op === "UpsertBucket"
            ? { upsertBucket: { bucket: { id: "b", name: "r" } } }
            : op === "ArtifactType"
              ? { project: null }
              : { createArtifact: {} };
        res.end(JSON.stringify({ data }));
      });
    });
    const uploader = new WandbArtifactUploader({ apiKey: KEY, baseUrl, maxAttempts: 1 });
    const error = await uploader.upload(artifact).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WandbApiError);
    expect((error as Error).message).toBe(
      "W&B CreateArtifact answered an unexpected shape: data.createArtifact.artifact: Invalid input: expected object, received undefined.",
    );
  });
});

describe("uploads to the emulator's signed URLs", () => {
  let emu: Emulator | undefined;
  afterEach(async () => {
    await emu?.close();
    emu = undefined;
  });

  it("fail with 403 if a Content-Type creeps back into the PUT", async () => {
    emu = await startEmulator({ port: 0, apiKeys: { [KEY]: "e" } });
    const baseUrl = new URL(emu.url).origin;
    // What Node's fetch does to a string body: adds text/plain;charset=UTF-8.
    const typed: typeof fetch = (input, init) =>
      fetch(
        input,
        init?.method === "PUT"
          ? {
              ...init,
              headers: { ...(init.headers as object), "content-type": "text/plain;charset=UTF-8" },
            }
          : init,
      );
    const uploader = new WandbArtifactUploader({
      apiKey: KEY,
      baseUrl,
      maxAttempts: 1,
      fetch: typed,
    });
    const error = await uploader.upload(artifact).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WandbApiError);
    expect((error as WandbApiError).status).toBe(403);
    expect((error as Error).message).toContain("SignatureDoesNotMatch");
    // Without the header, the same upload goes through.
    const plain = new WandbArtifactUploader({ apiKey: KEY, baseUrl, maxAttempts: 1 });
    await expect(plain.upload(artifact)).resolves.toBe("wandb-artifact:///e/p/data:v0");
  });
});

describe("the loopback guard parses the host", () => {
  it("takes 127.0.0.0/8, ::1 and localhost over http, and nothing that merely starts with 127.", async () => {
    for (const baseUrl of [
      "http://127.0.0.1:1",
      "http://127.3.4.5",
      "http://[::1]:8080",
      "http://localhost",
    ])
      expect(() => new WandbArtifactUploader({ apiKey: KEY, baseUrl })).not.toThrow();
    for (const baseUrl of [
      "http://127.evil.example",
      "http://127.0.0.1.nip.io",
      "http://128.0.0.1",
    ])
      expect(() => new WandbArtifactUploader({ apiKey: KEY, baseUrl })).toThrow(
        /expected an https:\/\/ base URL \(http:\/\/ only on loopback\)/,
      );
    const presigned = new PresignedUrlUploader({
      presign: () => ({ uploadUrl: "http://127.evil.example/bucket/x?sig=1" }),
    });
    await expect(presigned.upload(artifact)).rejects.toThrow(
      "PresignedUrlUploader: uploadUrl: expected an https:// upload URL (http:// only on loopback), got http://127.evil.example.",
    );
  });
});
