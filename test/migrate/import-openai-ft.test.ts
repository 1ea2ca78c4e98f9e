import { once } from "node:events";
import { createReadStream, createWriteStream, mkdtempSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { importOpenAiFt, readOpenAiFt } from "../../src/migrate/index.js";
import { toSftJsonl } from "../../src/training/index.js";

const fixture = (name: string) =>
  path.join(path.dirname(new URL(import.meta.url).pathname), "../fixtures/openai-ft", name);

async function all(file: string, preferredAsSft = false) {
  const out = [];
  for await (const l of readOpenAiFt(fixture(file), { preferredAsSft })) out.push(l);
  return out;
}

const weather = {
  type: "function",
  function: {
    name: "get_weather",
    parameters: { type: "object", properties: { city: { type: "string" } } },
  },
};

describe("readOpenAiFt", () => {
  it("accounts for every line of a mixed file, in order, with its status", async () => {
    const lines = await all("mixed.jsonl");
    const text = readFileSync(fixture("mixed.jsonl"), "utf8");
    expect(lines.map((l) => l.line)).toEqual(
      text
        .trimEnd()
        .split("\n")
        .map((_, i) => i + 1),
    );
    expect(lines.map((l) => l.status)).toEqual([
      "accepted",
      "converted",
      "converted",
      "converted",
      "preference",
      "refused",
      "refused",
      "refused",
      "refused",
      "refused",
      "refused",
    ]);
  });

  it("gives the exact rows, which the SFT path takes as they are", async () => {
    const lines = await all("mixed.jsonl");
    expect(lines[0]?.row).toEqual({
      messages: [
        { role: "system", content: "You classify support tickets." },
        { role: "user", content: "My card was charged twice." },
        { role: "assistant", content: "billing" },
      ],
    });
    expect(lines[1]?.row).toEqual({
      messages: [
        { role: "user", content: "What is the weather in Paris?" },
        {
          role: "assistant",
          tool_calls: [
            {
              id: "call_1",
              type: "function",
              function: { name: "get_weather", arguments: '{"city":"Paris"}' },
            },
          ],
        },
        { role: "tool", tool_call_id: "call_1", content: "18C, cloudy" },
        { role: "assistant", content: "It is 18C and cloudy in Paris." },
      ],
      tools: [weather],
    });
    expect(lines[1]?.changes).toEqual([
      "parallel_tool_calls (true) dropped: an SFT row has no such setting, and the tool calls are trained as written",
    ]);
    const rows = lines.flatMap((l) => (l.row ? [l.row] : []));
    expect(toSftJsonl(rows).lines).toBe(4);
  });

  it("cuts weight-0 turns after the last trained one and says the earlier ones stay as context", async () => {
    const [, , line3] = await all("mixed.jsonl");
    expect(line3?.row).toEqual({
      messages: [
        { role: "user", content: "Say hi" },
        { role: "assistant", content: "Hey." },
        { role: "user", content: "More politely" },
        { role: "assistant", content: "Hello, nice to meet you." },
      ],
    });
    expect(line3?.changes).toEqual([
      "weight 0 on messages[1]: kept as context for the later turns, and trained (the service trains every assistant message of a row)",
      "2 message(s) after messages[3], the last assistant message with weight 1, dropped (1 with weight 0: not trained, as on OpenAI)",
    ]);
  });

  it("converts the legacy functions form to tools and tool calls", async () => {
    const line4 = (await all("mixed.jsonl"))[3];
    expect(line4?.row).toEqual({
      messages: [
        { role: "user", content: "Weather in Oslo?" },
        {
          role: "assistant",
          content: null,
          tool_calls: [
            {
              id: "call_fn_1",
              type: "function",
              function: { name: "get_weather", arguments: '{"city":"Oslo"}' },
            },
          ],
        },
        { role: "tool", content: "-2C", tool_call_id: "call_fn_1" },
        { role: "assistant", content: "-2C in Oslo." },
      ],
      tools: [{ type: "function", function: weather.function }],
    });
    expect(line4?.changes).toEqual([
      "functions (1) converted to tools",
      "2 legacy function_call/function message(s) converted to tool_calls/tool messages",
    ]);
  });

  it("refuses bad lines with their line number and the field path", async () => {
    const refused = (await all("mixed.jsonl")).filter((l) => l.status === "refused");
    expect(refused.map((l) => [l.line, l.errors])).toEqual([
      [6, ["messages[1].weight: expected 0 or 1"]],
      [7, [expect.stringMatching(/^\(root\): not JSON \(/)]],
      [8, ["(root): expected a JSON object, got an empty line"]],
      [9, ["messages: every assistant message has weight 0, so nothing would be trained"]],
      [
        10,
        ["messages[1].tool_calls: parallel_tool_calls is false, but this message makes 2 calls"],
      ],
      [11, [expect.stringMatching(/^messages\[0\]\.role: /)]],
    ]);
    expect(refused.every((l) => l.row === undefined)).toBe(true);
  });

  it("counts preference lines, or trains their preferred answer on request", async () => {
    const counted = (await all("dpo.jsonl")).map((l) => l.status);
    expect(counted).toEqual(["preference", "preference", "refused"]);
    const asSft = await all("dpo.jsonl", true);
    expect(asSft.map((l) => l.status)).toEqual(["converted", "converted", "refused"]);
    expect(asSft[0]?.row).toEqual({
      messages: [
        { role: "user", content: "Is my order shipped?" },
        { role: "assistant", content: "Yes, it left our warehouse today." },
      ],
    });
    expect(asSft[2]?.errors).toEqual([
      "preferred_output: Too small: expected array to have >=1 items",
    ]);
  });
});

describe("importOpenAiFt", () => {
  it("writes the rows and returns counts that add up to the lines", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "oaift-"));
    const out = path.join(dir, "rows.jsonl");
    const heard: number[] = [];
    const summary = await importOpenAiFt(fixture("mixed.jsonl"), out, {
      onLine: (l) => heard.push(l.line),
    });
    expect(summary).toEqual({
      lines: 11,
      accepted: 1,
      converted: 3,
      refused: 6,
      preference: 1,
      rows: 4,
    });
    expect(heard).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    const rows = readFileSync(out, "utf8").trimEnd().split("\n");
    expect(rows).toHaveLength(4);
    expect(toSftJsonl(readFileSync(out, "utf8")).lines).toBe(4);
  });

  it("streams a 200k-line file: rows are written while most of the input is unread", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "oaift-big-"));
    const big = path.join(dir, "big.jsonl");
    const w = createWriteStream(big);
    const total = 200_000;
    for (let i = 0; i < total; i++) {
      const line = `${JSON.stringify({
        messages: [
          { role: "user", content: `ticket ${i}` },
          { role: "assistant", content: i % 2 ? "billing" : "shipping" },
        ],
      })}\n`;
      if (!w.write(line)) await once(w, "drain");
    }
    w.end();
    await once(w, "close");
    const size = statSync(big).size;
    const input = createReadStream(big, { highWaterMark: 64 * 1024 });
    const readAtWrite: number[] = [];
    let rows = 0;
    const sink = new Writable({
      highWaterMark: 1024,
      write(_chunk, _enc, done) {
        rows++;
        if (rows === 1 || rows === 100_000) readAtWrite.push(input.bytesRead);
        done();
      },
    });
    const summary = await importOpenAiFt(input, sink);
    expect(summary.rows).toBe(total);
    expect(rows).toBe(total);
    // The first row left before 1% of the file was read, and the middle one before all of it.
    expect(readAtWrite[0]).toBeLessThan(size / 100);
    expect(readAtWrite[1]).toBeLessThan(size * 0.6);
  }, 60_000);
});
