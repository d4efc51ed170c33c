// The shapes of connection authorizations on the public API, defined once: the tRPC procedures
// declare them as input and output, REST and the OpenAPI document are generated from them, lib/client
// and `planton connection auth …` take their types from them.
import { z } from "zod";

export const AUTHORIZATION_SCOPES = ["organization", "environment"] as const;

const connectionRef = z.string().trim().min(1).max(200).meta({ description: "The connection's name" });
const environmentName = z.string().trim().min(1).max(200);

/** GET /connections/authorizations: every connection's, or one connection's. */
export const listAuthorizationsInput = z.object({ connection: connectionRef.optional() });

/** POST /connections/{connection}/authorizations: who may use the connection, added to those who already may. */
export const addAuthorizationBody = z.object({
  connection: connectionRef,
  provider: z.string().trim().min(1).max(100).meta({ description: "The connection's provider (aws, gcp, …): a connection of another provider is refused" }),
  scope: z.enum(AUTHORIZATION_SCOPES).meta({ description: "organization: every environment may use it; environment: the ones named" }),
  environments: z.array(environmentName).max(100).default([]).meta({ description: "With scope environment: the environments, by name" }),
});

/** DELETE /connections/{connection}/authorizations?scope=…&environments=a,b: exactly the authorizations named are removed. */
export const removeAuthorizationInput = z.object({
  connection: connectionRef,
  provider: z.string().trim().min(1).max(100).optional().meta({ description: "When given, must be the connection's provider" }),
  scope: z.enum(AUTHORIZATION_SCOPES),
  environments: z.string().max(2000).optional().meta({ description: "With scope environment: the environments, comma-separated (dev,staging)" }),
});

export const authorizationSchema = z.object({
  scope: z.enum(AUTHORIZATION_SCOPES),
  /** The environment's name (scope environment); null for the organization. */
  environment: z.string().nullable(),
});

export const connectionAuthorizationsSchema = z
  .object({
    connection: z.string(),
    provider: z.string(),
    authorizations: z.array(authorizationSchema),
  })
  .meta({ id: "ConnectionAuthorizations" });

export const authorizationListSchema = z.object({ connections: z.array(connectionAuthorizationsSchema) }).meta({ id: "ConnectionAuthorizationList" });

/** What POST and DELETE answer: the connection's authorizations after the change, and what changed ("environment staging", "the organization"). */
export const authorizationChangeSchema = connectionAuthorizationsSchema
  .extend({ added: z.array(z.string()), removed: z.array(z.string()) })
  .meta({ id: "ConnectionAuthorizationChange" });

/** Who an authorization lets use a connection, in words: "the organization", "environment staging". */
export const authorizationLabel = (a: { scope: string; environment: string | null }) => (a.scope === "organization" ? "the organization" : `environment ${a.environment}`);
