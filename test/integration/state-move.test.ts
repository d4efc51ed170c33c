// The move off Planton-managed storage in the real console with a real runner: a job queued while its
// component's state moves waits (and says why), then runs against the new backend, a local directory
// on real files, and its state is there. The console's move is held after its "held" step by a test
// gate (PLANTON_TEST_GATES_DIR, the harness's signal files), so the job is queued mid-move without a clock.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import fs from "node:fs";
import path from "node:path";
import { eq } from "drizzle-orm";
import { stateBackends, stateObjects } from "../../db/schema";
import { newId } from "../../lib/ids";
import { createPlantonClient } from "../../lib/client";
import { reconfigure } from "../components";
import { createTestGates, type TestGates } from "../gates";
import { startJobStack, type JobStack } from "./harness";

let stack: JobStack;
let moveGates: TestGates;

beforeAll(async () => {
  moveGates = createTestGates();
  stack = await startJobStack({ env: moveGates.env });
  await stack.component("site", "dev", "StaticSite", { site_name: "moving" });
  await stack.startRunner("runner-move", 1);
}, 180_000);

afterAll(async () => {
  await stack?.close();
  if (moveGates) fs.rmSync(moveGates.dir, { recursive: true, force: true });
});

describe("a job queued during a move", () => {
  it("waits while its component is held, then runs against the new backend, and its state is there", async () => {
    const first = await stack.run("site", "update");
    expect((await stack.finished(first.id)).result).toBe("succeeded");
    const [before] = await stack.t.db.select().from(stateObjects).where(eq(stateObjects.componentId, stack.ids.site));
    expect(before.serial).toBeGreaterThan(0);

    // The queued job has something to apply, so it writes a newer state (on the new backend).
    await reconfigure(stack.t.db, stack.org.actor("engineer"), { id: stack.ids.site, spec: { site_name: "moved" } });
    const dir = path.join(stack.infraRoot, "own-states");
    await stack.t.db.insert(stateBackends).values({ id: newId("stateBackend"), orgId: stack.org.orgId, name: "own-local", kind: "local", config: { path: dir } });
    const admin = createPlantonClient({ url: stack.server.url, token: await stack.tokenFor("admin") });

    moveGates.hold("state-move.held");
    const move = await admin.stateMoves.start({ "*": "own-local" });
    await moveGates.held("state-move.held");
    const queued = await stack.run("site", "update");
    const waiting = await stack.rest.jobs.get(queued.id);
    expect(waiting.status).toBe("queued");
    expect(waiting.reason).toBe(`Waiting: this component's state is being moved to another backend (state move ${move.id}); the job runs when the move releases it, against the new backend.`);

    moveGates.release("state-move.held");
    const ended = await vi.waitFor(
      async () => {
        const m = await admin.stateMoves.get(move.id);
        if (m.status === "running") throw new Error(`move ${move.id} still runs: ${m.progress.done}/${m.progress.total}`);
        return m;
      },
      { timeout: 60_000, interval: 100 },
    );
    expect(ended.status, ended.items.map((i) => i.error).join("\n")).toBe("succeeded");

    const job = await stack.finished(queued.id);
    expect(job.result, job.reason ?? "").toBe("succeeded");
    const input = await stack.rest.jobs.getIacInput(queued.id);
    expect(input.backend).toMatchObject({ name: "own-local", kind: "local" });
    const lines = (await stack.events(queued.id)).filter((e) => e.type === "log").map((e) => String(e.payload.line));
    expect(lines).toContain("The component's state moved from backend planton-managed to own-local (local) after this job was queued; it runs against own-local.");

    // The job wrote its state on the new backend; the Planton-managed copy stayed as it was, marked as moved.
    const file = path.join(dir, "dev", "site", "terraform.tfstate");
    const written = JSON.parse(fs.readFileSync(file, "utf8")) as { serial: number; lineage: string };
    expect(written.lineage).toBe(before.lineage);
    expect(written.serial).toBeGreaterThan(before.serial!);
    const [after] = await stack.t.db.select().from(stateObjects).where(eq(stateObjects.componentId, stack.ids.site));
    expect([after.serial, after.checksum, after.movedAt !== null]).toEqual([before.serial, before.checksum, true]);
    expect((await admin.stateMoves.current()).remainingOnPlanton).toBe(0);
  });
});
