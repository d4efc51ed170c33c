import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { bundleSha256 as bundleChecksum } from "../lib/module-bundle";
import { writeBundle } from "./bundle";
import { tempDir } from "./test/helpers";

describe("module bundle", () => {
  it("checksums the canonical bundle: sorted paths, each path NUL content NUL", () => {
    const files = { "variables.tf": "variable \"a\" {}\n", "main.tf": "# main\n", "sub/x.tf": "" };
    const expected = createHash("sha256").update("main.tf\0# main\n\0sub/x.tf\0\0variables.tf\0variable \"a\" {}\n\0").digest("hex");
    expect(bundleChecksum(files)).toBe(expected);
    // Order of insertion does not matter.
    expect(bundleChecksum({ "sub/x.tf": "", "variables.tf": files["variables.tf"], "main.tf": files["main.tf"] })).toBe(expected);
  });

  it("writes the files when the checksum matches", async () => {
    const dir = await tempDir();
    const files = { "main.tf": "# hi\n", "nested/more.tf": "# more\n" };
    await writeBundle(dir, files, bundleChecksum(files));
    expect(await readFile(path.join(dir, "nested/more.tf"), "utf8")).toBe("# more\n");
  });

  it("refuses a bundle whose checksum does not match, and writes nothing", async () => {
    const dir = await tempDir();
    const files = { "main.tf": "# changed\n" };
    await expect(writeBundle(dir, files, "0".repeat(64))).rejects.toThrow(/Nothing ran: the module bundle does not match its checksum/);
    await expect(readFile(path.join(dir, "main.tf"))).rejects.toThrow();
  });

  it("refuses a bundle path that climbs out of the module folder", async () => {
    const dir = await tempDir();
    const files = { "../escape.tf": "x" };
    await expect(writeBundle(dir, files, bundleChecksum(files))).rejects.toThrow(/outside the module folder/);
  });
});
