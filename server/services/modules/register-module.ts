// Registering a module version in the organization's registry (planton module register, Settings →
// Modules): the source is fetched once, its bundle stored immutably by checksum, its inputs derived
// from its `variable` blocks; a kind the organization does not have yet becomes its own, with fields
// from those inputs. Nothing is saved unless all of it is.
import { and, eq, inArray } from "drizzle-orm";
import semver from "semver";
import type { z } from "zod";
import type { Database, Queryable } from "@/db/client";
import { catalogKinds, iacModules, moduleBundles } from "@/db/schema";
import { registerModuleBody, type ModuleVersion } from "@/lib/api/module-schemas";
import type { SpecField } from "@/lib/catalog";
import { newId } from "@/lib/ids";
import type { Actor } from "../../actor";
import { recordAudit } from "../../audit";
import { serverConfig } from "../../config";
import { badRequest, conflict, forbidden, isUniqueViolation } from "../../errors";
import { listCatalogKinds, newestModuleFirst } from "../catalog";
import { makeBundle, SourceRefusal, type Bundle } from "./bundle";
import { fetchGitSource } from "./fetch-git";
import { fieldsFromInputs, ModuleReadError, providerOf, readModuleFacts } from "./inputs";
import { readArchive } from "./read-archive";
import { mayRegisterModules, modulePolicy, moduleUsers, toModuleVersion } from "./views";

type Body = z.infer<typeof registerModuleBody>;

const NEVER_CHANGES = "a version, once registered, never changes; register a new version";

/** "TeamBucket" → "Team bucket". */
const titleOf = (kind: string) => kind.replace(/([a-z0-9])([A-Z])/g, "$1 $2").replace(/ ([A-Z])/g, (_, c: string) => ` ${c.toLowerCase()}`);

async function refuseUnlessAllowed(db: Queryable, actor: Actor) {
  const policy = await modulePolicy(db, actor.orgId);
  if (mayRegisterModules(actor.role, policy)) return;
  throw forbidden(
    actor.role === "engineer"
      ? "Nothing was registered: engineers may not register modules in this organization (its setting “Engineers may register modules” is off). Ask an admin to register it, or to turn the setting on in Settings → Modules (planton module policy --engineers-may-register true)."
      : `Nothing was registered: registering modules needs the admin role (or engineer, where the organization allows it), and you are a ${actor.role}. Ask an admin of the organization.`,
  );
}

/** Refusals that need no fetching: the version exists, the name belongs to another kind or to the platform. */
async function refuseNameClashes(db: Queryable, actor: Actor, input: Body) {
  const rows = await db.select().from(iacModules).where(and(eq(iacModules.name, input.name), inArray(iacModules.scopeKey, [actor.orgId, "platform"])));
  if (rows.some((r) => r.scopeKey === "platform")) {
    throw conflict(`Nothing was registered: ${input.name} is the name of one of the platform's modules. Choose another name for the organization's module.`, "name");
  }
  const same = rows.find((r) => r.version === input.version);
  if (same) {
    throw conflict(
      `Nothing was registered: ${input.name}@${input.version} is already registered (${same.sourceKind === "git" ? `from ${same.gitUrl} at ${same.gitCommit?.slice(0, 12)}` : same.sourceKind === "archive" ? `from ${same.archiveName}` : same.source}, sha256 ${same.bundleSha256}), and ${NEVER_CHANGES} (planton module versions ${input.name}).`,
      "version",
    );
  }
  const other = rows.find((r) => r.kind !== input.kind);
  if (other) throw conflict(`Nothing was registered: module ${input.name} provisions ${other.kind}, not ${input.kind}. Register it for ${other.kind}, or give the module for ${input.kind} another name.`, "kind");
}

async function bundleOf(input: Body): Promise<{ bundle: Bundle; source: Partial<typeof iacModules.$inferInsert> }> {
  if (input.source.type === "git") {
    const git = await fetchGitSource(input.source, serverConfig().PLANTON_MODULE_LOCAL_ROOTS);
    const bundle = makeBundle(git.entries, input.provisioner, `${git.path || "the repository's root"} at ${git.commit.slice(0, 12)}`);
    return {
      bundle,
      source: {
        sourceKind: "git",
        source: `git ${input.source.url}${git.path ? `//${git.path}` : ""}?ref=${input.source.ref}`,
        gitUrl: input.source.url,
        gitRef: input.source.ref,
        gitCommit: git.commit,
        gitPath: git.path,
      },
    };
  }
  const bytes = Buffer.from(input.source.contentBase64, "base64");
  const bundle = makeBundle(readArchive(input.source.fileName, bytes), input.provisioner, input.source.fileName);
  return { bundle, source: { sourceKind: "archive", source: `archive ${input.source.fileName}`, archiveName: input.source.fileName } };
}

/** The spec fields a platform kind's module must take: a field the module does not declare would be passed to it anyway. */
function refuseMissingInputs(kind: { kind: string; fields: SpecField[] }, inputs: string[]) {
  const missing = kind.fields.filter((f) => !inputs.includes(f.name)).map((f) => f.name);
  if (missing.length) {
    throw badRequest(
      `Nothing was registered: ${kind.kind}'s spec has ${missing.join(", ")}, and the module declares no variable of ${missing.length === 1 ? "that name" : "those names"}, so its jobs would be refused. Add ${missing.length === 1 ? "a variable" : "variables"} ${missing.join(", ")} to the module, then register a new version.`,
      "source",
    );
  }
}

export async function registerModule(db: Database, actor: Actor, raw: z.input<typeof registerModuleBody>): Promise<ModuleVersion> {
  const input = registerModuleBody.parse(raw);
  await refuseUnlessAllowed(db, actor);
  await refuseNameClashes(db, actor, input);
  const existingKind = (await listCatalogKinds(db, actor.orgId)).find((k) => k.kind === input.kind);

  let fetched: Awaited<ReturnType<typeof bundleOf>>;
  let facts: ReturnType<typeof readModuleFacts>;
  try {
    fetched = await bundleOf(input);
    facts = readModuleFacts(fetched.bundle.files);
  } catch (e) {
    if (e instanceof SourceRefusal || e instanceof ModuleReadError) throw badRequest(`Nothing was registered: ${e.message}`, "source");
    throw e;
  }
  const { bundle } = fetched;
  if (existingKind?.scope === "platform") refuseMissingInputs(existingKind, facts.inputs.map((i) => i.name));

  const id = newId("iacModule");
  try {
    await db.transaction(async (tx) => {
      await tx.insert(moduleBundles).values({ sha256: bundle.sha256, files: bundle.files, size: bundle.size, fileCount: bundle.fileCount }).onConflictDoNothing();
      await tx.insert(iacModules).values({
        id,
        orgId: actor.orgId,
        scopeKey: actor.orgId,
        kind: input.kind,
        name: input.name,
        provisioner: input.provisioner,
        version: input.version,
        source: "",
        ...fetched.source,
        bundleSha256: bundle.sha256,
        size: bundle.size,
        fileCount: bundle.fileCount,
        readme: bundle.readme,
        inputs: facts.inputs,
        registeredBy: actor.userId,
        registeredByLabel: actor.label,
      });
      const kindChange = await deriveKind(tx, actor, input, existingKind, fieldsFromInputs(facts.inputs), facts.providers);
      await recordAudit(tx, actor, {
        action: "module.register",
        targetId: id,
        targetName: `${input.name}@${input.version}`,
        summary: `Registered ${input.name}@${input.version} (${input.provisioner}) for ${input.kind} from ${fetched.source.source}, sha256 ${bundle.sha256}${kindChange ? `; ${kindChange}` : ""}`,
        changes: {
          kind: input.kind,
          provisioner: input.provisioner,
          source: input.source.type === "git" ? { type: "git", url: input.source.url, ref: input.source.ref, commit: fetched.source.gitCommit, path: fetched.source.gitPath } : { type: "archive", fileName: input.source.fileName },
          sha256: bundle.sha256,
          size: bundle.size,
          fileCount: bundle.fileCount,
          inputs: facts.inputs.map((i) => i.name),
          kindChange: kindChange ?? null,
        },
      });
    });
  } catch (e) {
    if (isUniqueViolation(e)) throw conflict(`Nothing was registered: ${input.name}@${input.version} was registered a moment ago by someone else, and ${NEVER_CHANGES}.`, "version");
    throw e;
  }
  const [row] = await db.select().from(iacModules).where(eq(iacModules.id, id));
  return toModuleVersion(row, await moduleUsers(db, actor.orgId, [row.kind]));
}

/**
 * A kind the organization does not have becomes its own, its fields from the module's inputs; a later
 * version of its module (the newest by semver) brings its fields up to date. Platform kinds keep theirs.
 */
async function deriveKind(tx: Queryable, actor: Actor, input: Body, existing: { scope: string } | undefined, fields: SpecField[], providers: string[]): Promise<string | null> {
  if (existing?.scope === "platform") return null;
  if (!existing) {
    await tx.insert(catalogKinds).values({
      id: newId("catalogKind"),
      orgId: actor.orgId,
      scopeKey: actor.orgId,
      kind: input.kind,
      title: input.title ?? titleOf(input.kind),
      description: input.description ?? `Provisioned by the organization's module ${input.name}.`,
      provider: input.provider ?? providerOf(providers),
      specSchema: { fields },
    });
    return `created the organization's kind ${input.kind} with fields ${fields.map((f) => f.name).join(", ") || "(none)"}`;
  }
  const versions = await tx.select().from(iacModules).where(and(eq(iacModules.scopeKey, actor.orgId), eq(iacModules.kind, input.kind)));
  const newest = versions.sort(newestModuleFirst)[0];
  if (newest && newest.name === input.name && newest.version === input.version && semver.valid(input.version)) {
    await tx
      .update(catalogKinds)
      .set({ specSchema: { fields }, ...(input.title ? { title: input.title } : {}), ...(input.description ? { description: input.description } : {}), ...(input.provider ? { provider: input.provider } : {}) })
      .where(and(eq(catalogKinds.scopeKey, actor.orgId), eq(catalogKinds.kind, input.kind)));
    return `updated ${input.kind}'s fields to ${fields.map((f) => f.name).join(", ") || "(none)"}`;
  }
  return null;
}
