// apply's state changes: the first of a burst waits for the ones after it, then they leave whenever the
// uploader is idle; what arrives during an upload goes in the next one; a batch the console did not take
// is sent again with the same seq numbers; the step's commit takes what is left.
import { describe, expect, it } from "vitest";
import type { StateChange } from "../engine/index";
import type { StateJournalBatch } from "../lib/state-delta";
import { StateJournalUploader } from "./state-journal";

const change = (serial: number): StateChange => ({ baseSerial: serial - 1, delta: { serial, lineage: "l", resources: [{ key: `random_id.r${serial}`, entry: null }] } });

/** A send that records each batch and answers (or fails) only when the test says so. */
function heldSend() {
  const batches: number[][] = [];
  const answers: { resolve: () => void; reject: (e: Error) => void }[] = [];
  let arrived: (() => void) | undefined;
  const send = (b: StateJournalBatch) => {
    batches.push(b.entries.map((e) => e.seq));
    arrived?.();
    return new Promise<void>((resolve, reject) => answers.push({ resolve, reject }));
  };
  const sent = (n: number) => new Promise<void>((resolve) => (batches.length >= n ? resolve() : (arrived = () => batches.length >= n && resolve())));
  return { batches, send, sent, answers };
}

describe("state journal uploader", () => {
  it("gathers the first changes of a burst into one batch, and coalesces the ones that arrive during an upload", async () => {
    const s = heldSend();
    const up = new StateJournalUploader({ step: "apply", lockId: "L", send: s.send, gatherMs: 0 });
    up.add(change(1));
    up.add(change(2));
    await s.sent(1);
    up.add(change(3));
    up.add(change(4));
    expect(s.batches).toEqual([[1, 2]]);
    s.answers[0].resolve();
    await s.sent(2);
    expect(s.batches).toEqual([[1, 2], [3, 4]]);
    s.answers[1].resolve();
    await up.flush();
    expect({ batches: up.batches, changes: up.changes }).toEqual({ batches: 2, changes: 4 });
    // The next burst waits for its own gathering.
    up.add(change(5));
    await s.sent(3);
    expect(s.batches.at(-1)).toEqual([5]);
  });

  it("a step that ends while its changes gather hands them all to the commit: no batch is sent", async () => {
    const s = heldSend();
    const up = new StateJournalUploader({ step: "apply", lockId: "L", send: s.send, gatherMs: 60_000 });
    for (let i = 1; i <= 3; i++) up.add(change(i));
    expect((await up.takeRest()).map((e) => e.seq)).toEqual([1, 2, 3]);
    expect(s.batches).toEqual([]);
    expect(await up.takeRest()).toEqual([]);
  });

  it("a batch the console did not take goes again with the same seqs, and flush waits for it", async () => {
    const s = heldSend();
    const up = new StateJournalUploader({ step: "apply", lockId: "L", send: s.send, retryMs: 60_000, gatherMs: 0 });
    up.add(change(1));
    await s.sent(1);
    up.add(change(2));
    s.answers[0].reject(new Error("connection reset"));
    // flush sends at once (no waiting for the retry timer), the failed change first.
    const flushed = up.flush();
    await s.sent(2);
    expect(s.batches).toEqual([[1], [1, 2]]);
    s.answers[1].resolve();
    await flushed;
    expect(up.batches).toBe(1);
  });

  it("takeRest lets an upload in flight end, then hands over what was not sent (for the commit) and sends nothing itself", async () => {
    const s = heldSend();
    const up = new StateJournalUploader({ step: "apply", lockId: "L", send: s.send, gatherMs: 0 });
    up.add(change(1));
    await s.sent(1);
    up.add(change(2));
    up.add(change(3));
    let taken: number[] | undefined;
    const rest = up.takeRest().then((r) => (taken = r.map((e) => e.seq)));
    await Promise.resolve();
    expect(taken).toBeUndefined();
    s.answers[0].resolve();
    await rest;
    expect(taken).toEqual([2, 3]);
    expect(s.batches).toEqual([[1]]);
    expect(await up.takeRest()).toEqual([]);
  });

  it("takeRest hands over a change whose upload failed too (the commit carries it, same seq)", async () => {
    const s = heldSend();
    const up = new StateJournalUploader({ step: "apply", lockId: "L", send: s.send, retryMs: 60_000, gatherMs: 0 });
    up.add(change(1));
    await s.sent(1);
    up.add(change(2));
    s.answers[0].reject(new Error("connection reset"));
    expect((await up.takeRest()).map((e) => e.seq)).toEqual([1, 2]);
    expect(s.batches).toEqual([[1]]);
  });
});
