// The one rule for "which address is this request from", used by the sign-in limits and the audit
// history alike. The socket's address comes from scripts/serve.mjs, which overwrites any incoming
// copy of SOCKET_ADDRESS_HEADER; X-Forwarded-For is believed only hop by hop from trusted proxies.
import { BlockList, isIP } from "node:net";

/** Set by scripts/serve.mjs from the TCP socket, after dropping whatever the client sent under that name. */
export const SOCKET_ADDRESS_HEADER = "x-planton-socket-address";

/** Parses `PLANTON_TRUSTED_PROXIES`: addresses and CIDRs, separated by commas or spaces. Throws naming the bad entry. */
export function parseTrustedProxies(text: string | undefined): BlockList {
  const list = new BlockList();
  for (const entry of (text ?? "").split(/[\s,]+/).filter(Boolean)) {
    const [addr, bits, extra] = entry.split("/");
    const ip = normalizeAddress(addr);
    const family = isIP(ip ?? "");
    const prefix = bits === undefined ? (family === 6 ? 128 : 32) : /^\d+$/.test(bits) ? Number(bits) : NaN;
    if (!ip || !family || extra !== undefined || !(prefix >= 0 && prefix <= (family === 6 ? 128 : 32))) throw new Error(`"${entry}" is not an IP address or CIDR`);
    list.addSubnet(ip, prefix, family === 6 ? "ipv6" : "ipv4");
  }
  return list;
}

/** `::ffff:10.0.0.1` → `10.0.0.1`; brackets and an IPv4 port are dropped; anything that is not an address → null. */
export function normalizeAddress(raw: string | null | undefined): string | null {
  let a = (raw ?? "").trim();
  if (a.startsWith("[")) a = a.slice(1, a.indexOf("]") === -1 ? undefined : a.indexOf("]"));
  else if (/^\d+\.\d+\.\d+\.\d+:\d+$/.test(a)) a = a.slice(0, a.lastIndexOf(":"));
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(a);
  if (mapped) a = mapped[1];
  return isIP(a) ? a.toLowerCase() : null;
}

// Under plain `next start` nobody overwrites the header, so a client could write it: then the address is unknown.
const socketHeaderIsOurs = () => (globalThis as { __plantonSocketAddressHeader?: boolean }).__plantonSocketAddressHeader === true;

const trusts = (list: BlockList, ip: string) => list.check(ip, isIP(ip) === 6 ? "ipv6" : "ipv4");

/**
 * The client's address: the socket's, unless the socket is a trusted proxy; then X-Forwarded-For is
 * walked right to left past trusted proxies, and the first address that is not one is the client.
 * Null when the socket's address is unknown.
 */
export function clientAddress(socketAddress: string | null | undefined, forwardedFor: string | null | undefined, trusted: BlockList): string | null {
  let address = normalizeAddress(socketAddress);
  if (!address) return null;
  const hops = (forwardedFor ?? "").split(",").map((h) => h.trim()).filter(Boolean);
  while (trusts(trusted, address) && hops.length) {
    const next = normalizeAddress(hops.pop());
    // A hop that is not an address ends the walk: the last trusted proxy is as far as the chain can be believed.
    if (!next) break;
    address = next;
  }
  return address;
}

let cached: { text: string | undefined; list: BlockList } | undefined;

/** The client address of a request under this server's PLANTON_TRUSTED_PROXIES (null when not served by scripts/serve.mjs). */
export function requestClientAddress(headers: Headers): string | null {
  const text = process.env.PLANTON_TRUSTED_PROXIES;
  const list = cached && cached.text === text ? cached.list : parseTrustedProxies(text);
  cached = { text, list };
  return clientAddress(socketHeaderIsOurs() ? headers.get(SOCKET_ADDRESS_HEADER) : null, headers.get("x-forwarded-for"), list);
}
