// Who may reach the emulator: whether a bind address is loopback only, and
// API keys read from a file or an environment variable instead of argv.
import { isIP } from "node:net";
import { InvalidArgumentError } from "../util/argument-error.js";

/**
 * Whether `host` only accepts connections from this machine (`localhost`,
 * `127.0.0.0/8`, `::1`). `0.0.0.0`, `::` and any other address are reachable
 * from elsewhere.
 *
 * @example
 * if (!isLoopbackHost(host) && !apiKeys) console.warn("anyone on the network can use this emulator");
 */
export function isLoopbackHost(host: string): boolean {
  if (typeof host !== "string")
    throw new InvalidArgumentError("isLoopbackHost(host)", "host", "a host name or address", host);
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, "$1");
  if (h === "localhost" || h.endsWith(".localhost")) return true;
  const v4 = h.startsWith("::ffff:") ? h.slice(7) : h;
  if (isIP(v4) === 4) return v4.startsWith("127.");
  if (isIP(h) === 6) return /^(0{0,4}:){1,7}0{0,3}1$/.test(h) || h === "::1";
  return false;
}

/**
 * Parses API keys from the text of a key file or of `EMULATOR_API_KEYS`:
 * entries separated by newlines or commas, each `KEY` (entity `local`) or
 * `KEY ENTITY`; blank entries and lines starting with `#` are skipped. Errors
 * name the entry by its position, never by its content.
 *
 * @example
 * parseApiKeys("dev-key alice\nci-key bob"); // { "dev-key": "alice", "ci-key": "bob" }
 * parseApiKeys(process.env.EMULATOR_API_KEYS ?? "");
 */
export function parseApiKeys(text: string, source = "the API key list"): Record<string, string> {
  if (typeof text !== "string")
    throw new InvalidArgumentError("parseApiKeys(text, source)", "text", "a string", text);
  if (typeof source !== "string")
    throw new InvalidArgumentError("parseApiKeys(text, source)", "source", "a string", source);
  const keys: Record<string, string> = {};
  const entries = text
    .split(/\r?\n/)
    .filter((line) => !line.trim().startsWith("#"))
    .flatMap((line) => line.split(","));
  let position = 0;
  for (const entry of entries) {
    const words = entry.trim().split(/\s+/).filter(Boolean);
    if (words.length === 0) continue;
    position++;
    if (words.length > 2) {
      throw new Error(
        `Entry ${position} of ${source} has more than a key and an entity; write one "KEY" or "KEY ENTITY" per line.`,
      );
    }
    keys[words[0] as string] = words[1] ?? "local";
  }
  return keys;
}
