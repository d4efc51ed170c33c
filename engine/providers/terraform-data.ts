import { randomUUID } from "node:crypto";
import { planFromSchema, type Provider, type ProviderSchema } from "./provider";

const SCHEMA: ProviderSchema = {
  name: "terraform",
  source: "terraform.io/builtin/terraform",
  resources: {
    terraform_data: {
      version: 0,
      idAttribute: "id",
      attributes: {
        input: { type: "any", optional: true },
        triggers_replace: { type: "any", optional: true, forceNew: true },
        output: { type: "any", computed: true },
        id: { type: "string", computed: true },
      },
    },
  },
};

/** The built-in terraform_data resource: stores input, mirrors it as output, replaces on triggers. */
export function createTerraformDataProvider(): Provider {
  return {
    schema: () => SCHEMA,
    configure: async () => {},
    read: async ({ state }) => ({ state }),
    plan: async ({ prior, config }) => {
      const result = planFromSchema(SCHEMA.resources.terraform_data!, prior, config);
      result.planned.output = result.planned.input ?? null;
      return result;
    },
    apply: async ({ prior, planned }) => {
      if (!planned) return { state: null };
      const id = prior && typeof prior.id === "string" ? prior.id : randomUUID();
      return { state: { ...planned, output: planned.input ?? null, id } };
    },
    importState: async ({ address }) => {
      throw new Error(`${address}: terraform_data cannot be imported; it holds only what the configuration gives it`);
    },
  };
}
