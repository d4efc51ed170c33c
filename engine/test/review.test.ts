import path from "node:path";
import { describe, expect, it } from "vitest";
import { apply, decodePlan, encodePlan, plan, reviewPlan, sensitiveValues } from "../index";
import { CATALOG, persisted, tempDir, writeModule } from "./helpers";

describe("the review rendition of a plan", () => {
  it("masks a generated password wherever the plan holds it (prior state, before/after, outputs), and cannot be applied", async () => {
    const root = await tempDir();
    const opts = { moduleDir: path.join(CATALOG, "database-credentials"), variables: { database_name: "orders" }, state: null, providerConfig: { local: { root } } };
    const store = persisted();
    const created = await apply({ ...opts, persistState: store.persistState }, (await plan(opts)).plan);
    const password = created.outputs.password!.value as string;
    // A changed username replaces the rotation resource and updates outputs; the password stays in prior state.
    const next = (await plan({ ...opts, variables: { database_name: "orders", username: "svc" }, state: created.state })).plan;
    expect(JSON.stringify(next)).toContain(password);
    expect(sensitiveValues(next)).toContain(password);

    const review = reviewPlan(next);
    const text = new TextDecoder().decode(encodePlan(review));
    expect(text).not.toContain(password);
    const pw = review.prior_state.resources.find((r) => r.type === "random_password")!.instances[0]!.attributes;
    expect(pw.result).toBe("(sensitive value)");
    expect(pw.length).toBe(24);
    expect(review.output_changes.password).toMatchObject({ sensitive: true, before: "(sensitive value)", after: "(sensitive value)" });
    expect(review.output_changes.username).toMatchObject({ before: "app", after: "svc" });
    expect(() => decodePlan(encodePlan(review))).toThrow(/review rendition of a plan, with sensitive values masked; it cannot be applied/);
  });

  it("masks variables declared sensitive or filled from the secret store, and the text they hold wherever else it appears", async () => {
    const dir = await writeModule({
      "main.tf": `
variable "token" {
  type      = string
  sensitive = true
}
variable "greeting" {
  type = string
}
resource "terraform_data" "note" {
  input = "\${var.greeting} / \${var.token}"
}
resource "terraform_data" "greet" {
  input = "\${var.greeting}!"
}
`,
    });
    const p = (await plan({ moduleDir: dir, variables: { token: "tok-0123456789", greeting: "hello-from-the-store" }, state: null })).plan;
    expect(p.variables.token).toEqual({ value: "tok-0123456789", sensitive: true });
    const review = reviewPlan(p, { secretVariables: ["greeting"] });
    expect(review.variables).toEqual({ token: { value: "(sensitive value)", sensitive: true }, greeting: { value: "(sensitive value)" } });
    const note = review.resource_changes.find((c) => c.address === "terraform_data.note")!;
    // Derived from a sensitive variable, the whole argument is sensitive, as in OpenTofu.
    expect(note.change.after_sensitive).toMatchObject({ input: true });
    expect(note.change.after).toMatchObject({ input: "(sensitive value)" });
    const greet = review.resource_changes.find((c) => c.address === "terraform_data.greet")!;
    expect(greet.change.after).toMatchObject({ input: "(sensitive value)!" });
    expect(reviewPlan(p).variables.greeting).toEqual({ value: "hello-from-the-store" });
  });
});
