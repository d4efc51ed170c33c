import { describe, expect, it } from "vitest";
import { safeNextPath } from "./safe-redirect";

describe("where sign-in goes next", () => {
  it("keeps a path on the console, with its query and fragment", () => {
    expect(safeNextPath("/o/acme/components")).toBe("/o/acme/components");
    expect(safeNextPath("/o/acme/jobs?status=running#top")).toBe("/o/acme/jobs?status=running#top");
    expect(safeNextPath("/o/acme/../acme/jobs")).toBe("/o/acme/jobs");
  });

  it.each([
    ["an absolute http URL", "http://evil.example/o/acme"],
    ["an absolute https URL", "https://evil.example"],
    ["a protocol-relative URL", "//evil.example/o/acme"],
    ["a backslash after the slash", "/\\evil.example"],
    ["backslashes only", "\\\\evil.example"],
    ["a tab that browsers drop", "/\t/evil.example"],
    ["a newline that browsers drop", "/\n/evil.example"],
    ["a javascript: URL", "javascript:alert(document.domain)"],
    ["a data: URL", "data:text/html,<script>alert(1)</script>"],
    ["a relative path without a slash", "o/acme"],
    ["a path that normalises to //", "/./\u002f/evil.example"],
    ["a space before the slashes", " //evil.example"],
    ["nothing", ""],
    ["no parameter at all", null],
  ])("sends %s to the organization's home", (_what, next) => {
    expect(safeNextPath(next)).toBe("/");
  });
});
