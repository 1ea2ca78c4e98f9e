// examples/production in a real browser (Debian's Chromium, headless, through
// playwright-core): a user chats on the page and clicks thumbs up, and the
// reward reaches the conversation's trajectory through the signed URL with no
// key in the page; a tampered URL is refused, and a page of an origin the
// operator did not allow cannot use a valid one.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type ChatService, startChatService } from "../../examples/production/service.js";
import { type Browser, launch } from "../report/browser.js";

let service: ChatService;
let browser: Browser;
let elsewhere: Server;
let elsewhereURL: string;

beforeAll(async () => {
  service = await startChatService();
  browser = await launch();
  // A page of another origin, which the proxy does not allow.
  elsewhere = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/html" });
    res.end("<!doctype html><title>elsewhere</title>");
  });
  await new Promise<void>((resolve) => elsewhere.listen(0, "127.0.0.1", resolve));
  elsewhereURL = `http://127.0.0.1:${(elsewhere.address() as AddressInfo).port}`;
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await service?.close();
  await new Promise((resolve) => elsewhere?.close(resolve));
});

const stored = async (id: string) => {
  const r = await fetch(`${service.proxyURL}/v1/trajectories/${id}`, {
    headers: { authorization: `Bearer ${service.controlKey}` },
  });
  expect(r.status).toBe(200);
  return (await r.json()) as {
    session: string;
    reward: number | null;
    eligible: boolean | null;
    feedback: { reward?: number }[];
    trajectory: { reward: number; messages_and_choices: unknown[] };
  };
};

/** A page that collects console and page errors. */
async function page(url: string): Promise<{ tab: Page; problems: string[] }> {
  const tab = await browser.context.newPage();
  const problems: string[] = [];
  tab.on("console", (m) => {
    if (m.type() === "error") problems.push(m.text());
  });
  tab.on("pageerror", (e) => problems.push(String(e)));
  await tab.goto(url, { waitUntil: "load" });
  return { tab, problems };
}

/** Sends a message on the chat page; resolves to the answer's element. */
async function say(tab: Page, message: string) {
  const before = await tab.locator(".bot").count();
  await tab.locator("#message").fill(message);
  await tab.locator("#send").click();
  const answer = tab.locator(".bot").nth(before);
  await answer.locator(".thumb.up").waitFor();
  return answer;
}

it("a thumbs up clicked on the page gives the conversation's trajectory reward 1, with its feedback record", async () => {
  const { tab, problems } = await page(service.url);
  try {
    const first = await say(tab, "What is the capital of France?");
    const second = await say(tab, "And of Spain?");
    const id = (await second.getAttribute("data-trajectory")) as string;
    // Both turns are one session, so one trajectory.
    expect(await first.getAttribute("data-trajectory")).toBe(id);
    expect(id).toMatch(/^trj_/);
    expect((await stored(id)).reward).toBeNull();

    await second.locator(".thumb.up").click();
    await expect.poll(() => second.locator(".status").textContent()).toBe("thanks");

    const record = await stored(id);
    expect(record.session).toMatch(/^web-/);
    expect(record.reward).toBe(1);
    expect(record.eligible).toBe(true);
    expect(record.trajectory.reward).toBe(1);
    expect(record.feedback).toHaveLength(1);
    expect(record.feedback[0]).toMatchObject({ trajectory_id: id, reward: 1 });
    // system, user, answer, user, answer.
    expect(record.trajectory.messages_and_choices).toHaveLength(5);
    // The page never held the proxy's key.
    expect(await tab.content()).not.toContain(service.controlKey);

    // A thumbs down later wins (the latest reward is the trajectory's).
    await first.locator(".thumb.down").click();
    await expect.poll(() => first.locator(".status").textContent()).toBe("thanks");
    expect((await stored(id)).reward).toBe(0);
    expect(problems).toEqual([]);
  } finally {
    await tab.close();
  }
}, 60_000);

it("refuses a tampered signed URL (403), and grants no CORS to an origin the operator did not allow", async () => {
  const answer = await (
    await fetch(`${service.url}/chat`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ session: "cors-check", message: "hello" }),
    })
  ).json();
  const url = new URL(answer.feedback_url as string);
  const token = url.searchParams.get("token") as string;
  // One character of the signature changed, away from its end.
  const at = token.length - 5;
  const swapped = token[at] === "A" ? "B" : "A";
  url.searchParams.set("token", `${token.slice(0, at)}${swapped}${token.slice(at + 1)}`);
  const tampered = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", origin: service.url },
    body: JSON.stringify({ reward: 1 }),
  });
  expect(tampered.status).toBe(403);
  expect((await tampered.json()).error.code).toBe("invalid_feedback_token");

  // The preflight: granted to the service's own page, refused to another origin.
  const preflight = (origin: string) =>
    fetch(answer.feedback_url, {
      method: "OPTIONS",
      headers: {
        origin,
        "access-control-request-method": "POST",
        "access-control-request-headers": "content-type",
      },
    });
  const allowed = await preflight(service.url);
  expect(allowed.status).toBe(204);
  expect(allowed.headers.get("access-control-allow-origin")).toBe(service.url);
  const refused = await preflight(elsewhereURL);
  expect(refused.status).toBe(403);
  expect(refused.headers.get("access-control-allow-origin")).toBeNull();

  // In the browser: a page of that origin cannot post with the valid URL.
  const { tab } = await page(elsewhereURL);
  try {
    const outcome = await tab.evaluate(async (target) => {
      try {
        const r = await fetch(target, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ reward: 1 }),
        });
        return `status ${r.status}`;
      } catch (error) {
        return `refused: ${(error as Error).message}`;
      }
    }, answer.feedback_url as string);
    expect(outcome).toMatch(/^refused: /);
  } finally {
    await tab.close();
  }
  const record = await stored(answer.trajectory_id);
  expect(record.feedback).toEqual([]);
  expect(record.reward).toBeNull();
}, 60_000);
