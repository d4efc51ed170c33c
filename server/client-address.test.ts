import { describe, expect, it } from "vitest";
import { clientAddress, normalizeAddress, parseTrustedProxies } from "./client-address";
import { serverConfig } from "./config";

const none = parseTrustedProxies(undefined);
const proxies = parseTrustedProxies("10.0.0.5, 192.168.1.0/24 fd00::/8");

describe("the client address", () => {
  it("is the socket's when no proxy is trusted, whatever X-Forwarded-For says", () => {
    expect(clientAddress("198.51.100.9", "1.2.3.4", none)).toBe("198.51.100.9");
    expect(clientAddress("::ffff:198.51.100.9", "1.2.3.4, 5.6.7.8", none)).toBe("198.51.100.9");
    expect(clientAddress("10.0.0.5", "1.2.3.4", none)).toBe("10.0.0.5");
  });

  it("walks X-Forwarded-For right to left past trusted proxies only", () => {
    // The client prepends a made-up hop; the trusted proxy appends the address it really saw.
    expect(clientAddress("10.0.0.5", "6.6.6.6, 203.0.113.4", proxies)).toBe("203.0.113.4");
    // Two trusted hops (a load balancer behind an edge proxy), then the client.
    expect(clientAddress("10.0.0.5", "203.0.113.4, 192.168.1.20", proxies)).toBe("203.0.113.4");
    expect(clientAddress("fd00::1", "2001:db8::7", proxies)).toBe("2001:db8::7");
    // An untrusted socket is the client, even when it claims to forward for someone.
    expect(clientAddress("198.51.100.9", "203.0.113.4", proxies)).toBe("198.51.100.9");
    // A trusted proxy with no X-Forwarded-For is itself the client; a garbage hop ends the walk there.
    expect(clientAddress("10.0.0.5", null, proxies)).toBe("10.0.0.5");
    expect(clientAddress("10.0.0.5", "203.0.113.4, not-an-ip", proxies)).toBe("10.0.0.5");
  });

  it("is unknown without a socket address", () => {
    expect(clientAddress(null, "1.2.3.4", proxies)).toBeNull();
    expect(clientAddress("", "1.2.3.4", none)).toBeNull();
  });

  it("reads addresses the way proxies write them", () => {
    expect(normalizeAddress("[2001:DB8::1]")).toBe("2001:db8::1");
    expect(normalizeAddress("203.0.113.4:51234")).toBe("203.0.113.4");
    expect(normalizeAddress("unknown")).toBeNull();
  });

  it("PLANTON_TRUSTED_PROXIES refuses an entry that is not an address or CIDR, naming it", () => {
    expect(() => serverConfig({ PLANTON_TRUSTED_PROXIES: "10.0.0.5,proxy.internal" })).toThrow(
      `PLANTON_TRUSTED_PROXIES is "10.0.0.5,proxy.internal", which is not a list of IP addresses and CIDRs ("proxy.internal" is not an IP address or CIDR). Set it like PLANTON_TRUSTED_PROXIES=10.0.0.5,192.168.0.0/24, or unset it for the default.`,
    );
    expect(() => serverConfig({ PLANTON_TRUSTED_PROXIES: "10.0.0.0/33" })).toThrow(/"10\.0\.0\.0\/33" is not an IP address or CIDR/);
    expect(serverConfig({ PLANTON_TRUSTED_PROXIES: "10.0.0.0/8" }).PLANTON_TRUSTED_PROXIES.check("10.1.2.3")).toBe(true);
  });
});
