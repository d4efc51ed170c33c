import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ClaimLoop } from "./claim-loop";
import { RunnerClient } from "./client";
import { StandInServer } from "./test/stand-in-server";
import { tempDir } from "./test/helpers";

// A module that holds its apply open: a sleep, then a file that waits for it.
const SLOW = {
  "main.tf": `
resource "time_sleep" "settle" {
  create_duration = "700ms"
}

resource "local_file" "after" {
  filename   = "after-\${var.name}.txt"
  content    = time_sleep.settle.id
  depends_on = [time_sleep.settle]
}

variable "name" {
  type = string
}
`,
};

const until = async (cond: () => boolean, ms = 15_000) => {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 10));
  }
};

// The claim loop against a STAND-IN for the server's runner routes.
describe("claim loop", () => {
  let server: StandInServer;
  let root: string;
  beforeEach(async () => {
    server = await new StandInServer().start();
    root = await tempDir("planton-root-");
  });
  afterEach(() => server.stop());

  const enqueue = (name: string) =>
    server.enqueue(
      {
        operation: "update",
        steps: ["init", "preview", "apply"],
        variables: { name },
        connection: { name: "laptop", provider: "local", mode: "stored", config: { root } },
        component: { id: `cmp_${name}`, name, kind: "Slow", environment: "dev" },
      },
      SLOW,
    );

  it("runs at most `capacity` jobs at once and takes the next when one ends", async () => {
    for (const n of ["a", "b", "c"]) enqueue(n);
    let running = 0;
    let peak = 0;
    server.onStepStart = (step) => {
      if (step === "init") peak = Math.max(peak, ++running);
    };
    const loop = new ClaimLoop({ runner: new RunnerClient(server.url, "rnr_test"), capacity: 2, workRoot: await tempDir(), waitSeconds: 0, onJobEnd: () => running-- });
    void loop.start();
    await until(() => server.attemptEnds.length === 3);
    await loop.stop(1000);
    expect(peak).toBe(2);
    expect(server.attemptEnds.map((a) => a.exitCode)).toEqual([0, 0, 0]);
  });

  it("when the grace period runs out mid-apply, the in-flight resource finishes, nothing new starts, state is saved and the attempt ends", async () => {
    enqueue("g");
    const loop = new ClaimLoop({ runner: new RunnerClient(server.url, "rnr_test"), capacity: 1, workRoot: await tempDir(), waitSeconds: 0 });
    void loop.start();
    await until(() => server.stepStarts.includes("apply"));
    await loop.stop(100);
    expect(server.attemptEnds).toHaveLength(1);
    expect(server.stepFinishes.at(-1)).toMatchObject({ step: "apply", body: { result: "failed", reason: expect.stringContaining("1 resource(s) were not started; state was saved") } });
    const state = server.components.get("cmp_g")!.state!;
    expect(state.resources.map((r) => r.type)).toEqual(["time_sleep"]);
    expect(server.components.get("cmp_g")!.lock).toBeNull();
  });
});
