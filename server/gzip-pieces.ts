// A live stream sent gzip-compressed, each piece compressed once for every viewer. A batch of events is
// written to each of its viewers (a hundred copies of a plan's burst of a few hundred lines), so its bytes
// are what the fan-out costs — on the wire, and in the console's socket writes. One gzip stream per viewer
// would compress each batch once per viewer; instead each piece is deflated once, on its own (a fresh
// compressor, so it refers to nothing before it) and ended with a sync flush (so it ends on a byte
// boundary, with no final block): such pieces, in any order a viewer receives them, concatenate into one
// valid deflate stream. Each viewer's response is then a gzip header, the shared pieces, and at the end a
// final empty block and the trailer (CRC-32 and length of what that viewer was sent, kept per viewer by
// zlib's crc32, which costs a few microseconds per batch). Node's zlib has no API that shares compressed
// output between streams, hence this small framing of our own (RFC 1951 §3.2.3–3.2.6, RFC 1952 §2.3).
import Negotiator from "negotiator";
import { constants, crc32, deflateRawSync } from "node:zlib";

/** Whether a request's Accept-Encoding takes gzip (negotiated as HTTP says: `gzip;q=0` refuses it, `*` takes it). */
export function acceptsGzip(acceptEncoding: string | null | undefined): boolean {
  if (!acceptEncoding) return false;
  return new Negotiator({ headers: { "accept-encoding": acceptEncoding } }).encodings(["gzip"]).includes("gzip");
}

/** A piece of a stream, deflated once: its bytes as sent, and what they stand for. */
export interface DeflatedPiece {
  raw: Buffer;
  deflated: Buffer;
}

/** Deflates `raw` on its own, ending on a byte boundary with no final block (see above). Level 1: a plan's burst still shrinks about 15×. */
export function deflatePiece(raw: Buffer): DeflatedPiece {
  return { raw, deflated: deflateRawSync(raw, { level: 1, finishFlush: constants.Z_SYNC_FLUSH }) };
}

// ID1 ID2, CM = deflate, no flags, no modification time, no extra flags, OS unknown.
const GZIP_HEADER = Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0, 0x00, 0xff]);
// A final, empty block with fixed Huffman codes: BFINAL 1, BTYPE 01, end-of-block (seven 0 bits).
const FINAL_EMPTY_BLOCK = Buffer.from([0x03, 0x00]);

/** One viewer's gzip stream of shared pieces. */
export class GzipPieces {
  private crc = 0;
  private size = 0;
  private begun = false;

  /** The bytes to write for `piece`: its deflated bytes (after the gzip header, the first time). */
  next(piece: DeflatedPiece): Buffer {
    // (Node's crc32 answers 0, not the value it was given, for an empty buffer zlib has compressed.)
    if (piece.raw.length) this.crc = crc32(piece.raw, this.crc);
    this.size = (this.size + piece.raw.length) >>> 0;
    if (this.begun) return piece.deflated;
    this.begun = true;
    return Buffer.concat([GZIP_HEADER, piece.deflated]);
  }

  /** The bytes that end the stream: the final block and the trailer. */
  end(): Buffer {
    const trailer = Buffer.alloc(8);
    trailer.writeUInt32LE(this.crc >>> 0, 0);
    trailer.writeUInt32LE(this.size, 4);
    return Buffer.concat([this.begun ? Buffer.alloc(0) : GZIP_HEADER, FINAL_EMPTY_BLOCK, trailer]);
  }
}
