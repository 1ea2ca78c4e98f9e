import { isIP } from "node:net";

/**
 * Whether a URL's hostname names this machine: `localhost` (or a name under
 * `.localhost`), an IPv4 literal in 127.0.0.0/8, or the IPv6 literal `::1`.
 * The host is parsed, not prefix-matched, so `127.evil.example` is not loopback.
 *
 * @example
 * isLoopbackHostname(new URL("http://127.0.0.1:8000").hostname); // true
 * isLoopbackHostname(new URL("http://127.evil.example").hostname); // false
 */
export function isLoopbackHostname(hostname: string): boolean {
  const h = hostname
    .toLowerCase()
    .replace(/^\[(.*)\]$/, "$1")
    .replace(/\.$/, "");
  if (h === "localhost" || h.endsWith(".localhost")) return true;
  if (isIP(h) === 4) return Number(h.split(".")[0]) === 127;
  if (isIP(h) === 6) return /^(0{0,4}:){2,7}0{0,3}1$/.test(h) || h === "::1";
  return false;
}

/** Whether a credential may travel to this URL: https anywhere, http only to loopback. */
export function isSafeForCredentials(url: URL): boolean {
  return (
    url.protocol === "https:" || (url.protocol === "http:" && isLoopbackHostname(url.hostname))
  );
}
