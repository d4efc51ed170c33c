// What a bundle takes in from a source's files: tool folders, state and plan files are left out (a
// repository may carry a committed state, which can hold secrets); the rest is checked and hashed.
import { describe, expect, it } from "vitest";
import { makeBundle } from "./bundle";

const entry = (path: string, text: string) => ({ path, data: Buffer.from(text, "utf8") });

describe("a module bundle", () => {
  it("leaves out .git, .terraform, state and plan files, and keeps the module's own files", () => {
    const b = makeBundle(
      [
        entry("main.tf", `variable "name" {}\n`),
        entry("README.md", "# site\n"),
        entry("templates/page.tpl", "hello ${name}\n"),
        entry(".git/config", "[core]\n"),
        entry(".terraform/providers/x", "cache"),
        entry("terraform.tfstate", `{"secret":"hunter2"}`),
        entry("envs/prod/terraform.tfstate.backup", `{"secret":"hunter2"}`),
        entry("plan.tfplan", "plan"),
      ],
      "builtin",
      "the test's files",
    );
    expect(Object.keys(b.files).sort()).toEqual(["README.md", "main.tf", "templates/page.tpl"]);
    expect(b).toMatchObject({ fileCount: 3, readme: "# site\n" });
    expect(JSON.stringify(b.files)).not.toContain("hunter2");
  });
});
