import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, testDriver, type TestDatabase } from "../../test/database";
import { recordSignInFailure, recordSignInSuccess, signInLock, SIGN_IN_LIMITS } from "./sign-in-limits";

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(() => t.close());

const at = (minutes: number) => new Date(Date.UTC(2026, 11, 1, 10, 0) + minutes * 60_000);

describe(`sign-in limits (${testDriver})`, () => {
  it("locks an (account, address) pair after 5 failures, for a while that doubles with each further failure", async () => {
    for (let i = 0; i < 4; i++) await recordSignInFailure(t.db, "ann@example.test", "198.51.100.1", at(0));
    expect(await signInLock(t.db, "ann@example.test", "198.51.100.1", at(0))).toBeNull();
    await recordSignInFailure(t.db, "ann@example.test", "198.51.100.1", at(0));
    expect(await signInLock(t.db, "ann@example.test", "198.51.100.1", at(0))).toEqual({
      scope: "pair",
      until: at(1),
      message: "Too many failed sign-ins for this account. Try again after 10:01 UTC",
    });
    expect(await signInLock(t.db, "ann@example.test", "198.51.100.1", at(1))).toBeNull();
    await recordSignInFailure(t.db, "ann@example.test", "198.51.100.1", at(1));
    expect((await signInLock(t.db, "ann@example.test", "198.51.100.1", at(1)))?.until).toEqual(at(3));
    // Another address and another account are untouched.
    expect(await signInLock(t.db, "ann@example.test", "198.51.100.2", at(1))).toBeNull();
    expect(await signInLock(t.db, "bob@example.test", "198.51.100.1", at(1))).toBeNull();
  });

  it("the account's ceiling is capped, and an address the account signed in from before is exempt from it", async () => {
    await recordSignInSuccess(t.db, "cat@example.test", "203.0.113.5", at(0));
    for (let i = 0; i < SIGN_IN_LIMITS.account.after + 10; i++) await recordSignInFailure(t.db, "cat@example.test", `198.51.100.${i % 50}`, at(0));
    const lock = await signInLock(t.db, "cat@example.test", "198.18.0.1", at(0));
    expect(lock?.scope).toBe("account");
    expect(lock!.until.getTime() - at(0).getTime()).toBe(SIGN_IN_LIMITS.maxLockSeconds * 1000);
    expect(await signInLock(t.db, "cat@example.test", "203.0.113.5", at(0))).toBeNull();
  });

  it("an address that fails for many accounts is locked for all of them, saying so", async () => {
    for (let i = 0; i < SIGN_IN_LIMITS.address.after; i++) await recordSignInFailure(t.db, `spray${i}@example.test`, "192.0.2.66", at(0));
    expect((await signInLock(t.db, "someone@example.test", "192.0.2.66", at(0)))?.message).toBe("Too many failed sign-ins from your network address. Try again after 10:01 UTC");
  });

  it("failures are forgotten after an hour without one", async () => {
    for (let i = 0; i < 4; i++) await recordSignInFailure(t.db, "dan@example.test", "198.51.100.9", at(0));
    await recordSignInFailure(t.db, "dan@example.test", "198.51.100.9", at(61));
    expect(await signInLock(t.db, "dan@example.test", "198.51.100.9", at(61))).toBeNull();
  });
});
