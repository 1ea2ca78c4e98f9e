// Each resource's request core, for the prepared requests (prepared.ts) that
// go through it without a method on the public class. Below both the
// resources, which register here, and prepared.ts, which takes the resource
// types: neither imports the other's module for it.
import type { RequestCore } from "./core.js";

const cores = new WeakMap<object, RequestCore>();

/** Called by a resource's constructor: the core its prepared requests go through. */
export function registerCore(resource: object, core: RequestCore): void {
  cores.set(resource, core);
}

/** The core `resource` registered; a TypeError naming `what` for any other object. */
export function coreOf(resource: object, what: string): RequestCore {
  const core = cores.get(resource);
  if (!core) throw new TypeError(`${what}: expected the client's own resource object`);
  return core;
}
