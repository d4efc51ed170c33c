import { describe, expect, it } from "vitest";
import { heldBody, holdBody } from "./held-bodies";
import { readBodyBytes, readBodyText } from "./input-guard";

describe("bodies the console already holds", () => {
  it("are read as held, within the same bound as a streamed body, and a body with none held is read from its stream", async () => {
    const held = holdBody(new Request("http://console.invalid/x", { method: "POST" }), Buffer.from('{"events":[]}'));
    expect(await readBodyText(held, 1024)).toBe('{"events":[]}');
    // Over the bound: refused as a streamed body of that size is.
    const large = holdBody(new Request("http://console.invalid/x", { method: "POST" }), Buffer.alloc(2048));
    await expect(readBodyBytes(large, 1024)).rejects.toThrow(/larger than/);
    const streamed = new Request("http://console.invalid/x", { method: "POST", body: "streamed" });
    expect(heldBody(streamed)).toBeUndefined();
    expect(await readBodyText(streamed, 1024)).toBe("streamed");
    const answer = holdBody(new Response("answer"), "answer");
    expect(heldBody(answer)).toBe("answer");
  });
});
