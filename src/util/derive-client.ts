// Clients derived from an adapted `openai` client are adapted the same way.
import type OpenAI from "openai";

/**
 * Makes every client `client.withOptions(…)` derives (openai 5 to 7; openai 4
 * has no way to derive a client from an instance: per-call options go in
 * `create`'s second argument) go through `adapt` too, as `client` did, and so
 * on down. The SDK's own `withOptions` (the class's, or one an earlier adapter
 * installed) still builds the derived client.
 */
export function deriveLike<T extends object>(client: T, adapt: (derived: T) => T): void {
  const withOptions = (client as { withOptions?: unknown }).withOptions;
  if (typeof withOptions !== "function") return;
  Object.defineProperty(client, "withOptions", {
    configurable: true,
    writable: true,
    value: function withOptionsAdapted(this: unknown, ...args: unknown[]) {
      const derived = withOptions.apply(this ?? client, args) as T;
      return derived !== null && typeof derived === "object" ? adapt(derived) : derived;
    },
  });
}

/**
 * Requests whose `model` is empty get `name`, on `openai` and on every client
 * derived from it (`withOptions`). An own property shadows the prototype's
 * method on this instance only.
 */
export function fillModelName(openai: OpenAI, name: string): OpenAI {
  fillIn(openai.chat.completions, name);
  // The Responses API (openai 4.87 and later); `responses.stream()` and
  // `parse()` call `create` on the same object, so they are filled too.
  const responses = (openai as { responses?: { create?: unknown } }).responses;
  if (responses && typeof responses.create === "function") fillIn(responses as never, name);
  deriveLike(openai, (derived) => fillModelName(derived, name));
  return openai;
}

function fillIn(resource: { create: (...args: never[]) => unknown }, name: string): void {
  const create = resource.create.bind(resource) as (body: unknown, opts?: unknown) => unknown;
  Object.defineProperty(resource, "create", {
    configurable: true,
    writable: true,
    value: (body: { model?: string }, opts?: unknown) =>
      create({ ...body, model: body?.model ? body.model : name }, opts),
  });
}
