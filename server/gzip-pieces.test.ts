import { constants, createGunzip, gunzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { acceptsGzip, deflatePiece, GzipPieces } from "./gzip-pieces";

const pieces = ["id: 1\ndata: {}\n\n", "x".repeat(70_000), "", ": heartbeat\n\n", JSON.stringify({ line: "é — 🚀" }).repeat(300)].map((t) => deflatePiece(Buffer.from(t)));

describe("a gzip stream of pieces deflated once", () => {
  it("decodes to every piece, in whichever order and number a viewer is sent them, with a trailer gunzip checks", () => {
    for (const order of [[0, 1, 2, 3, 4], [4, 3, 3, 0], [1], [2, 2], []]) {
      const stream = new GzipPieces();
      const bytes = Buffer.concat([...order.map((i) => stream.next(pieces[i])), stream.end()]);
      // gunzipSync checks the CRC-32 and the length in the trailer: a wrong one throws.
      expect(gunzipSync(bytes).toString(), JSON.stringify(order)).toBe(order.map((i) => pieces[i].raw.toString()).join(""));
    }
  });

  it("hands each viewer the same deflated bytes of a piece (after the header, the first time)", () => {
    const [a, b] = [new GzipPieces(), new GzipPieces()];
    a.next(pieces[0]);
    expect(a.next(pieces[1])).toBe(pieces[1].deflated);
    expect(b.next(pieces[1]).subarray(10)).toEqual(pieces[1].deflated);
  });

  it("lets a reader decode each piece as it arrives, before the stream ends", async () => {
    const stream = new GzipPieces();
    const gunzip = createGunzip({ flush: constants.Z_SYNC_FLUSH });
    const out: string[] = [];
    gunzip.on("data", (d: Buffer) => out.push(d.toString()));
    for (const p of pieces) {
      gunzip.write(stream.next(p));
      await new Promise<void>((resolve) => gunzip.flush(constants.Z_SYNC_FLUSH, () => resolve()));
      // Everything sent so far is readable now: nothing waits for the stream's end.
      expect(out.join("")).toBe(pieces.slice(0, pieces.indexOf(p) + 1).map((q) => q.raw.toString()).join(""));
    }
    gunzip.end(stream.end());
    await new Promise((resolve, reject) => (gunzip.on("end", resolve), gunzip.on("error", reject)));
  });

  it("shrinks what repeats (a plan's burst of similar lines) many times over", () => {
    const burst = Buffer.from(Array.from({ length: 240 }, (_, i) => `id: ${i}\ndata: {"seq":${i},"type":"log","payload":{"line":"  + time_sleep.call[${i}]: Plan to create"}}\n\n`).join(""));
    expect(deflatePiece(burst).deflated.length * 5).toBeLessThan(burst.length);
  });
});

describe("Accept-Encoding", () => {
  it.each([
    ["gzip, deflate, br", true],
    ["gzip;q=0.5, br", true],
    ["*", true],
    ["GZIP", true],
    ["gzip;q=0", false],
    ["br, deflate", false],
    ["identity", false],
    ["*;q=0", false],
    ["", false],
    [undefined, false],
  ])("%s takes gzip: %s", (header, takes) => {
    expect(acceptsGzip(header)).toBe(takes);
  });
});
