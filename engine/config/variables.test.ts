import { describe, expect, it } from "vitest";
import { checkVariableValue, moduleInputs } from "./inputs";
import { parseModule } from "./module";

const files = {
  "variables.tf": `variable "name" {
  type        = string
  description = "The site's name"
  validation {
    condition     = length(var.name) >= 3 && can(regex("^[a-z-]+$", var.name))
    error_message = "The name must be at least 3 lowercase letters or dashes."
  }
}

variable "replicas" {
  type    = number
  default = "2"
  validation {
    condition     = var.replicas > 0
    error_message = "Replicas must be positive, not \${var.replicas}."
  }
}

variable "password" {
  type      = string
  sensitive = true
  nullable  = false
  default   = "changeme"
}

variable "tags" {
  type    = set(string)
  default = ["b", "a", "b"]
}

variable "site" {
  type = object({
    domain = string
    https  = optional(bool, true)
    ports  = optional(list(number))
  })
  default = { domain = "example.com" }
}

variable "anything" {}
`,
  "main.tf": `locals {\n  x = 1\n}\n`,
  "templates/t.tpl": "not hcl %{",
};

describe("moduleInputs", () => {
  it("describes each variable with its type, default, validations and file:line", () => {
    const inputs = moduleInputs(files);
    expect(inputs.map((i) => i.name)).toEqual(["name", "replicas", "password", "tags", "site", "anything"]);
    expect(inputs[0]).toEqual({
      name: "name",
      type: "string",
      kind: "string",
      default: undefined,
      required: true,
      description: "The site's name",
      sensitive: false,
      nullable: true,
      validations: [{ condition: `length(var.name) >= 3 && can(regex("^[a-z-]+$", var.name))`, errorMessage: "The name must be at least 3 lowercase letters or dashes." }],
      source: "variables.tf:1",
      file: "variables.tf",
      line: 1,
    });
    expect(inputs[1]).toMatchObject({ type: "number", kind: "number", default: 2, required: false, validations: [{ condition: "var.replicas > 0", errorMessage: '"Replicas must be positive, not ${var.replicas}."' }] });
    expect(inputs[2]).toMatchObject({ sensitive: true, nullable: false, default: "changeme" });
    expect(inputs[3]).toMatchObject({ type: "set(string)", kind: "list", default: ["a", "b"] });
    expect(inputs[4]).toMatchObject({ type: "object({ domain = string, https = optional(bool, true), ports = optional(list(number)) })", kind: "object", default: { domain: "example.com", https: true, ports: null } });
    expect(inputs[5]).toMatchObject({ type: "any", kind: "any", required: true, source: "variables.tf:40" });
  });
});

describe("checkVariableValue", () => {
  it("accepts good values and converts as OpenTofu does", () => {
    expect(checkVariableValue(files, "name", "my-site")).toEqual([]);
    expect(checkVariableValue(files, "replicas", "3")).toEqual([]);
    expect(checkVariableValue(files, "replicas", undefined)).toEqual([]);
    expect(checkVariableValue(files, "site", { domain: "x.org", extra: 1 })).toEqual([]);
  });

  it("returns the validation's error_message with file:line", () => {
    expect(checkVariableValue(files, "name", "No")).toEqual([
      "variables.tf:5: Invalid value for variable\nThe name must be at least 3 lowercase letters or dashes.\n\nThis was checked by the validation rule at variables.tf:4 for var.name.",
    ]);
    expect(checkVariableValue(files, "replicas", 0)[0]).toMatch(/^variables\.tf:14: Invalid value for variable\nReplicas must be positive, not 0\./);
  });

  it("returns type conversion errors in OpenTofu's words", () => {
    expect(checkVariableValue(files, "replicas", "many")).toEqual([
      "variables.tf:10: Invalid value for input variable\nThe given value is not suitable for var.replicas declared at variables.tf:10: a number is required.",
    ]);
    expect(checkVariableValue(files, "site", { https: true })[0]).toMatch(/var\.site declared at variables\.tf:31: attribute "domain" is required\./);
    expect(checkVariableValue(files, "site", { domain: "x", ports: ["a"] })[0]).toMatch(/attribute "ports": element 0: a number is required\./);
    expect(checkVariableValue(files, "tags", "a")[0]).toMatch(/set of string required\./);
    expect(checkVariableValue(files, "name", ["x"])[0]).toMatch(/string required\./);
  });

  it("null: the default for a nullable = false variable; otherwise null", () => {
    expect(checkVariableValue(files, "password", null)).toEqual([]);
    expect(checkVariableValue(files, "name", null)[0]).toMatch(/Invalid variable validation result|Invalid function argument/);
  });

  it("names unknown and required variables", () => {
    expect(checkVariableValue(files, "nope", 1)).toEqual(['Value for undeclared variable: the module declares no variable "nope"']);
    expect(checkVariableValue(files, "name", undefined)).toEqual(["variables.tf:1: No value for required variable: var.name is not set and has no default"]);
  });
});

describe("variable blocks", () => {
  it("refuse a default that does not fit the type, and a validation without error_message", () => {
    expect(() => parseModule({ "v.tf": `variable "n" {\n  type    = number\n  default = "x"\n}\n` })).toThrow(
      /^v\.tf:3: Invalid default value for variable\nThis default value is not compatible with the variable's type constraint: a number is required\./,
    );
    expect(() => parseModule({ "v.tf": `variable "n" {\n  validation {\n    condition = true\n  }\n}\n` })).toThrow(/^v\.tf:2: Missing required argument: a validation block needs both condition and error_message/);
    expect(() => parseModule({ "v.tf": `variable "n" {\n  type = optional(string)\n}\n` })).toThrow(/optional\(\) is allowed only for an attribute of an object type/);
  });

  it("an error_message that shows a sensitive value is not displayed", () => {
    const f = { "v.tf": `variable "pw" {\n  sensitive = true\n  validation {\n    condition     = length(var.pw) > 8\n    error_message = "\${var.pw} is too short."\n  }\n}\n` };
    expect(checkVariableValue(f, "pw", "abc")[0]).toMatch(/^v\.tf:4: Invalid value for variable\nThe error message included a sensitive value, so it will not be displayed\./);
  });

  it("a validation may refer only to its own variable", () => {
    const f = { "v.tf": `variable "a" {\n  validation {\n    condition     = var.b > 1\n    error_message = "No."\n  }\n}\nvariable "b" {}\n` };
    expect(checkVariableValue(f, "a", 1)).toEqual([
      'v.tf:3: Invalid reference in variable validation\nThe condition for variable "a" can only refer to the variable itself, using var.a; other variables are not available here.',
    ]);
  });
});
