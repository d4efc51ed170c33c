// The organization's module registry against a real database: versions registered from a git
// repository the test makes on local disk (git init --bare + commits) and from archives the test
// makes with tar and zip; every bad source refused with its reason and nothing saved; the version a
// component's job runs, its checksum on the job; derived kinds and their spec validation.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { and, count, eq } from "drizzle-orm";
import { auditEvents, catalogKinds, iacModules, infraJobs, moduleBundles } from "@/db/schema";
import { PLATFORM_CATALOG } from "@/lib/catalog";
import { bundleSha256 } from "@/lib/module-bundle";
import { newId } from "@/lib/ids";
import { SENSITIVE_VALUE } from "@/lib/secrets";
import { createTestDatabase, type TestDatabase } from "../../../test/database";
import { seedTestOrg, type TestOrg } from "../../../test/fixtures";
import { PlantonError } from "../../errors";
import { getCatalogKind } from "../catalog";
import { changeComponent, createComponentAndDeploy } from "../components/lifecycle";
import { createJob } from "../jobs/create-job";
import { readModuleBundle } from "../modules/read-folder";
import { getModuleVersion, listModuleVersions } from "./get-module";
import { readModuleFacts } from "./inputs";
import { listModules } from "./list-modules";
import { registerModule } from "./register-module";
import { setModulePolicy } from "./set-policy";

let t: TestDatabase;
let org: TestOrg;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "planton-modules-"));
const allowed = path.join(tmp, "repos");
const outside = path.join(tmp, "elsewhere");
const previousRoots = process.env.PLANTON_MODULE_LOCAL_ROOTS;

beforeAll(async () => {
  fs.mkdirSync(allowed);
  fs.mkdirSync(outside);
  process.env.PLANTON_MODULE_LOCAL_ROOTS = allowed;
  t = await createTestDatabase();
  org = await seedTestOrg(t.db);
});
afterAll(async () => {
  process.env.PLANTON_MODULE_LOCAL_ROOTS = previousRoots;
  await t.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

const GIT_ENV = { ...process.env, GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@example.test", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@example.test", GIT_CONFIG_GLOBAL: "/dev/null" };
const git = (cwd: string, ...args: string[]) => execFileSync("git", args, { cwd, env: GIT_ENV, encoding: "utf8" }).trim();

function writeFiles(dir: string, files: Record<string, string | Buffer>) {
  for (const [p, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, p)), { recursive: true });
    fs.writeFileSync(path.join(dir, p), content);
  }
}

/** A bare repository under `root` whose main branch has one commit per file set (the last tagged v-last); answers its URL and the commits. */
function bareRepo(name: string, commits: Record<string, string | Buffer>[], root = allowed) {
  const work = fs.mkdtempSync(path.join(tmp, "work-"));
  git(work, "init", "-q", "-b", "main");
  const ids: string[] = [];
  for (const files of commits) {
    writeFiles(work, files);
    git(work, "add", "-A");
    git(work, "commit", "-q", "-m", `commit ${ids.length + 1}`);
    ids.push(git(work, "rev-parse", "HEAD"));
  }
  git(work, "tag", "v-last");
  const bare = path.join(root, `${name}.git`);
  git(tmp, "clone", "-q", "--bare", work, bare);
  return { url: `file://${bare}`, commits: ids };
}

const BUCKET_MODULE = {
  "README.md": "# team bucket\n\nA folder standing in for a bucket.\n",
  "variables.tf": `
variable "bucket" {
  type        = string
  description = "The bucket's name."
  validation {
    condition     = length(var.bucket) <= 12
    error_message = "bucket must be at most 12 characters."
  }
}

variable "copies" {
  type    = number
  default = 2
}

variable "labels" {
  type        = map(string)
  default     = {}
  description = "Labels to put on it."
}

variable "token" {
  type      = string
  sensitive = true
  default   = ""
}
`,
  "main.tf": `
terraform {
  required_providers {
    local = { source = "hashicorp/local" }
  }
}

resource "local_file" "marker" {
  filename = "buckets/\${var.bucket}.txt"
  content  = join(",", [for k, v in var.labels : "\${k}=\${v}"])
}
`,
};

const counts = async () => ({
  modules: (await t.db.select({ n: count() }).from(iacModules).where(eq(iacModules.scopeKey, org.orgId)))[0].n,
  bundles: (await t.db.select({ n: count() }).from(moduleBundles))[0].n,
  kinds: (await t.db.select({ n: count() }).from(catalogKinds).where(eq(catalogKinds.scopeKey, org.orgId)))[0].n,
  audit: (await t.db.select({ n: count() }).from(auditEvents).where(eq(auditEvents.orgId, org.orgId)))[0].n,
});

async function refused(call: () => Promise<unknown>) {
  const before = await counts();
  const err = await call().then(
    () => null,
    (e) => e,
  );
  expect(err, "the registration was refused").toBeInstanceOf(PlantonError);
  expect(await counts(), "nothing was saved").toEqual(before);
  return (err as PlantonError).message;
}

const register = (body: Record<string, unknown>, role: "admin" | "engineer" | "viewer" = "admin") =>
  registerModule(t.db, org.actor(role), { provisioner: "builtin", ...body } as Parameters<typeof registerModule>[2]);

describe("registering from git", () => {
  it("fetches the ref once, records the commit, subfolder and checksum, and derives a new kind's fields from the module's variables", async () => {
    const repo = bareRepo("team", [{ "modules/bucket/main.tf": "# first\n" }, Object.fromEntries(Object.entries(BUCKET_MODULE).map(([p, c]) => [`modules/bucket/${p}`, c]))]);
    const v = await register({ name: "team-bucket", version: "1.0.0", kind: "TeamBucket", source: { type: "git", url: repo.url, ref: "main", path: "modules/bucket" } });

    expect(v).toMatchObject({ name: "team-bucket", version: "1.0.0", kind: "TeamBucket", provisioner: "builtin", scope: "organization", fileCount: 3, registeredBy: org.actor().label });
    expect(v.source).toEqual({ kind: "git", url: repo.url, ref: "main", commit: repo.commits[1], path: "modules/bucket", archiveName: null });
    const files = Object.fromEntries(Object.entries(BUCKET_MODULE));
    expect(v.sha256).toBe(bundleSha256(files));
    expect(v.readme).toContain("A folder standing in for a bucket.");
    expect(v.inputs.map((i) => [i.name, i.type, i.kind, i.required, i.sensitive])).toEqual([
      ["bucket", "string", "string", true, false],
      ["copies", "number", "number", false, false],
      ["labels", "map(string)", "json", false, false],
      ["token", "string", "string", false, true],
    ]);
    expect(v.inputs[0]).toMatchObject({ file: "variables.tf", line: 2, validations: [{ condition: "length(var.bucket) <= 12", errorMessage: "bucket must be at most 12 characters." }] });

    const [stored] = await t.db.select().from(moduleBundles).where(eq(moduleBundles.sha256, v.sha256!));
    expect(stored.files).toEqual(files);

    const kind = await getCatalogKind(t.db, org.orgId, "TeamBucket");
    expect(kind).toMatchObject({ scope: "organization", title: "Team bucket", provider: "local" });
    expect(kind.fields).toEqual([
      { name: "bucket", type: "string", required: true, description: "The bucket's name.", validations: [{ condition: "length(var.bucket) <= 12", errorMessage: "bucket must be at most 12 characters." }] },
      { name: "copies", type: "number", default: 2, description: "The module's copies input (number)." },
      { name: "labels", type: "json", default: {}, description: "Labels to put on it.", hclType: "map(string)" },
      { name: "token", type: "string", description: "The module's token input (string).", sensitive: true },
    ]);
    // A sensitive input's default is neither shown nor filled into specs (where it would be stored and returned).
    expect(v.inputs[3]).toMatchObject({ name: "token", default: SENSITIVE_VALUE, required: false });

    const [event] = await t.db.select().from(auditEvents).where(and(eq(auditEvents.orgId, org.orgId), eq(auditEvents.action, "module.register")));
    expect(event).toMatchObject({ targetId: v.id, targetName: "team-bucket@1.0.0", actorLabel: org.actor().label });
  });

  it("takes a tag or a commit as the ref, and a later version brings the kind's fields up to date", async () => {
    const repo = bareRepo("evolving", [BUCKET_MODULE, { "variables.tf": BUCKET_MODULE["variables.tf"] + '\nvariable "region" {\n  type = string\n  default = "eu"\n}\n' }]);
    const first = await register({ name: "evolving", version: "0.1.0", kind: "EvolvingBucket", source: { type: "git", url: repo.url, ref: repo.commits[0] } });
    expect(first.source.commit).toBe(repo.commits[0]);
    expect((await getCatalogKind(t.db, org.orgId, "EvolvingBucket")).fields.map((f) => f.name)).toEqual(["bucket", "copies", "labels", "token"]);
    const second = await register({ name: "evolving", version: "0.2.0", kind: "EvolvingBucket", source: { type: "git", url: repo.url, ref: "v-last" } });
    expect(second.source.commit).toBe(repo.commits[1]);
    expect((await getCatalogKind(t.db, org.orgId, "EvolvingBucket")).fields.map((f) => f.name)).toEqual(["bucket", "copies", "labels", "token", "region"]);
    expect((await listModuleVersions(t.db, org.actor("viewer"), { name: "evolving" })).versions.map((x) => x.version)).toEqual(["0.2.0", "0.1.0"]);
    expect((await getModuleVersion(t.db, org.actor("viewer"), { name: "evolving", version: "0.1.0" })).sha256).toBe(first.sha256);
  });

  it("refuses each bad source with its reason, and saves nothing", async () => {
    const repo = bareRepo("bad", [{ "mod/main.tf": "# a module\n", "docs/readme.md": "no terraform here\n", "big/main.tf": `# ${"x".repeat(1024 * 1024 + 10)}\n` }]);
    const src = (more: Record<string, unknown>) => ({ name: "bad-one", version: "1.0.0", kind: "BadKind", source: { type: "git", url: repo.url, ref: "main", ...more } });
    expect(await refused(() => register(src({ url: `file://${allowed}/missing.git` })))).toMatch(/^Nothing was registered: the repository file:\/\/.*missing\.git could not be reached \(git said: .+\)\. Check the URL/);
    expect(await refused(() => register(src({ ref: "no-such-branch" })))).toMatch(/has no branch, tag or commit no-such-branch \(it has main, v-last\)\. Give an existing ref/);
    expect(await refused(() => register(src({ path: "modules/none" })))).toMatch(/has no folder modules\/none\. Check --path/);
    expect(await refused(() => register(src({ path: "docs" })))).toMatch(/docs at [0-9a-f]{12} has no \.tf files at its top level, and a builtin module is its folder's \.tf files/);
    expect(await refused(() => register(src({ path: "big" })))).toMatch(/main\.tf in big at [0-9a-f]{12} is 1\.0 MiB, more than a module's file may be \(1 MiB\)/);
    expect(await refused(() => register(src({ path: "../etc" })))).toMatch(/path \.\.\/etc leaves the repository/);
    const elsewhere = bareRepo("elsewhere", [{ "main.tf": "# x\n" }], outside);
    expect(await refused(() => register(src({ url: elsewhere.url })))).toMatch(/is a repository on the server's own disk, and it is not under the folders the operator allows .* PLANTON_MODULE_LOCAL_ROOTS/);
    expect(await refused(() => register(src({ url: "ext::sh -c touch% /tmp/pwned" })))).toMatch(/is not a repository URL/);
    expect(await refused(() => register(src({ url: "http://example.test/repo.git" })))).toMatch(/plain http/);
  });

  it("never changes a registered version: registering it again is refused, and the database refuses an update of its source", async () => {
    const repo = bareRepo("fixed", [BUCKET_MODULE]);
    const v = await register({ name: "fixed", version: "1.0.0", kind: "FixedBucket", source: { type: "git", url: repo.url, ref: "main" } });
    expect(await refused(() => register({ name: "fixed", version: "1.0.0", kind: "FixedBucket", source: { type: "git", url: repo.url, ref: "main" } }))).toMatch(
      /^Nothing was registered: fixed@1\.0\.0 is already registered \(from .* at [0-9a-f]{12}, sha256 [0-9a-f]{64}\), and a version, once registered, never changes; register a new version/,
    );
    expect(await refused(() => register({ name: "fixed", version: "1.1.0", kind: "OtherKind", source: { type: "git", url: repo.url, ref: "main" } }))).toMatch(/module fixed provisions FixedBucket, not OtherKind/);
    expect(await refused(() => register({ name: "static-site", version: "9.0.0", kind: "StaticSite", source: { type: "git", url: repo.url, ref: "main" } }))).toMatch(/static-site is the name of one of the platform's modules/);
    const err: any = await t.db
      .update(iacModules)
      .set({ gitCommit: "0".repeat(40) })
      .where(eq(iacModules.id, v.id))
      .catch((e) => e);
    expect(String(err?.cause?.message ?? err?.message)).toMatch(/module fixed@1\.0\.0 is registered and never changes; register a new version/);
  });
});

describe("registering an archive", () => {
  const archiveDir = () => {
    const dir = fs.mkdtempSync(path.join(tmp, "archive-"));
    writeFiles(path.join(dir, "bucket"), BUCKET_MODULE);
    return dir;
  };
  const b64 = (file: string) => fs.readFileSync(file).toString("base64");

  it("reads a .tar.gz and a .zip, strips their single top-level folder, and the same files make the same checksum", async () => {
    const dir = archiveDir();
    execFileSync("tar", ["-czf", path.join(dir, "bucket.tar.gz"), "-C", dir, "bucket"]);
    execFileSync("zip", ["-qr", path.join(dir, "bucket.zip"), "bucket"], { cwd: dir });
    const tgz = await register({ name: "archived", version: "1.0.0", kind: "ArchivedBucket", source: { type: "archive", fileName: "bucket.tar.gz", contentBase64: b64(path.join(dir, "bucket.tar.gz")) } });
    const zip = await register({ name: "archived", version: "1.0.1", kind: "ArchivedBucket", source: { type: "archive", fileName: "bucket.zip", contentBase64: b64(path.join(dir, "bucket.zip")) } });
    expect(tgz.source).toMatchObject({ kind: "archive", archiveName: "bucket.tar.gz", url: null });
    expect(tgz.sha256).toBe(bundleSha256(BUCKET_MODULE));
    expect(zip.sha256).toBe(tgz.sha256);
    expect(tgz.fileCount).toBe(3);
    // Stored once.
    expect((await t.db.select({ n: count() }).from(moduleBundles).where(eq(moduleBundles.sha256, tgz.sha256!)))[0].n).toBe(1);
  });

  it("refuses an entry escaping its folder, a symbolic or hard link, in .tar.gz and .zip, and saves nothing", async () => {
    const dir = archiveDir();
    // Python's tarfile and zipfile write the hostile entries tar and zip themselves will not.
    const py = `
import io, sys, tarfile, zipfile, os
d = sys.argv[1]
def tgz(name, entries):
    with tarfile.open(os.path.join(d, name), "w:gz") as t:
        for (n, kind, data) in entries:
            i = tarfile.TarInfo(n)
            if kind == "file":
                i.size = len(data); t.addfile(i, io.BytesIO(data))
            elif kind == "sym":
                i.type = tarfile.SYMTYPE; i.linkname = data.decode(); t.addfile(i)
            else:
                i.type = tarfile.LNKTYPE; i.linkname = data.decode(); t.addfile(i)
def zp(name, entries):
    with zipfile.ZipFile(os.path.join(d, name), "w") as z:
        for (n, kind, data) in entries:
            i = zipfile.ZipInfo(n)
            if kind == "sym":
                i.create_system = 3; i.external_attr = (0o120777 << 16)
            z.writestr(i, data)
main = ("main.tf", "file", b"# ok\\n")
tgz("dotdot.tar.gz", [main, ("../escape.tf", "file", b"# out\\n")])
tgz("absolute.tar.gz", [main, ("/etc/cron.d/x", "file", b"x\\n")])
tgz("symlink.tar.gz", [main, ("passwd", "sym", b"/etc/passwd")])
tgz("hardlink.tar.gz", [main, ("shadow", "hard", b"/etc/shadow")])
zp("dotdot.zip", [main, ("../../escape.tf", "file", b"# out\\n")])
zp("symlink.zip", [main, ("passwd", "sym", b"/etc/passwd")])
`;
    execFileSync("python3", ["-c", py, dir]);
    const up = (fileName: string) => () => register({ name: "hostile", version: "1.0.0", kind: "HostileKind", source: { type: "archive", fileName, contentBase64: b64(path.join(dir, fileName)) } });
    expect(await refused(up("dotdot.tar.gz"))).toMatch(/dotdot\.tar\.gz has an entry "\.\.\/escape\.tf" that escapes its folder/);
    expect(await refused(up("absolute.tar.gz"))).toMatch(/has an entry "\/etc\/cron\.d\/x" that escapes its folder/);
    expect(await refused(up("symlink.tar.gz"))).toMatch(/symlink\.tar\.gz has a symbolic link passwd, and a module bundle takes plain files only/);
    expect(await refused(up("hardlink.tar.gz"))).toMatch(/hardlink\.tar\.gz has a hard link shadow/);
    expect(await refused(up("dotdot.zip"))).toMatch(/dotdot\.zip has an entry "\.\.\/\.\.\/escape\.tf" that escapes its folder/);
    expect(await refused(up("symlink.zip"))).toMatch(/symlink\.zip has a symbolic link passwd/);
    const notText = path.join(dir, "binary");
    writeFiles(notText, { "main.tf": "# ok\n", "logo.png": Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2]) });
    execFileSync("tar", ["-czf", path.join(dir, "binary.tar.gz"), "-C", notText, "."]);
    expect(await refused(up("binary.tar.gz"))).toMatch(/holds UTF-8 text files only, and binary\.tar\.gz has a file that is not: logo\.png/);
    expect(await refused(() => register({ name: "hostile", version: "1.0.0", kind: "HostileKind", source: { type: "archive", fileName: "junk.tar.gz", contentBase64: Buffer.from("not gzip").toString("base64") } }))).toMatch(
      /junk\.tar\.gz is not a gzip-compressed tar file/,
    );
  });

  it("refuses an archive that unpacks past the bundle limit, stopping as it reads (a small file of zeros)", async () => {
    const dir = archiveDir();
    // 32 MiB of zeros compresses to ~32 KiB; liar.zip's headers say its entry unpacks to 100 bytes.
    const py = `
import io, sys, tarfile, zipfile, os, struct
d = sys.argv[1]
zeros = bytes(32 * 1024 * 1024)
with tarfile.open(os.path.join(d, "zeros.tar.gz"), "w:gz") as t:
    i = tarfile.TarInfo("main.tf"); i.size = len(zeros); t.addfile(i, io.BytesIO(zeros))
with zipfile.ZipFile(os.path.join(d, "zeros.zip"), "w", zipfile.ZIP_DEFLATED) as z:
    for n in range(8):
        z.writestr(f"part{n}.tf", bytes(1024 * 1024))
with zipfile.ZipFile(os.path.join(d, "liar.zip"), "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("main.tf", zeros)
b = bytearray(open(os.path.join(d, "liar.zip"), "rb").read())
struct.pack_into("<I", b, 22, 100)
struct.pack_into("<I", b, b.index(b"PK\\x01\\x02") + 24, 100)
open(os.path.join(d, "liar.zip"), "wb").write(b)
`;
    execFileSync("python3", ["-c", py, dir]);
    const up = (fileName: string) => () => register({ name: "bomb", version: "1.0.0", kind: "BombKind", source: { type: "archive", fileName, contentBase64: b64(path.join(dir, fileName)) } });
    for (const f of ["zeros.tar.gz", "zeros.zip", "liar.zip"]) expect(fs.statSync(path.join(dir, f)).size).toBeLessThan(200 * 1024);
    expect(await refused(up("zeros.tar.gz"))).toMatch(/zeros\.tar\.gz unpacks to more than a module bundle may hold \(5 MiB\)/);
    expect(await refused(up("zeros.zip"))).toMatch(/zeros\.zip unpacks to more than a module bundle may hold \(5 MiB\)/);
    expect(await refused(up("liar.zip"))).toMatch(/main\.tf in liar\.zip could not be unpacked \(too many bytes in the stream\. expected 100\. got at least/);
  });
});

describe("who may register", () => {
  it("admins always; engineers only when the organization allows it; viewers never", async () => {
    const repo = bareRepo("policy", [BUCKET_MODULE]);
    const body = (version: string) => ({ name: "policy-bucket", version, kind: "PolicyBucket", source: { type: "git", url: repo.url, ref: "main" } });
    expect(await refused(() => register(body("1.0.0"), "engineer"))).toMatch(/engineers may not register modules in this organization \(its setting “Engineers may register modules” is off\)\. Ask an admin .* Settings → Modules/);
    expect((await listModules(t.db, org.actor("engineer"), {})).mayRegister).toBe(false);
    expect(await setModulePolicy(t.db, org.actor(), { engineersMayRegister: true })).toEqual({ engineersMayRegister: true });
    expect((await register(body("1.0.0"), "engineer")).registeredBy).toBe(org.actor("engineer").label);
    expect(await refused(() => register(body("1.0.1"), "viewer"))).toMatch(/needs the admin role .* and you are a viewer/);
    await setModulePolicy(t.db, org.actor(), { engineersMayRegister: false });
    const events = await t.db.select().from(auditEvents).where(and(eq(auditEvents.orgId, org.orgId), eq(auditEvents.action, "module.policy_change")));
    expect(events.map((e) => e.summary)).toEqual(["Let engineers register module versions", "Made registering module versions admins-only"]);
  });
});

describe("the module a component's job runs", () => {
  it("follows the latest version until pinned; the job records the version's checksum, and preflight says which rule chose it", async () => {
    const repo = bareRepo("follow", [BUCKET_MODULE, { "main.tf": BUCKET_MODULE["main.tf"] + "\n# v2\n" }]);
    const v1 = await register({ name: "follow", version: "1.0.0", kind: "FollowBucket", source: { type: "git", url: repo.url, ref: repo.commits[0] } });
    const make = (name: string, module?: string) => createComponentAndDeploy(t.db, org.actor(), { environment: "dev", kind: "FollowBucket", name, spec: { bucket: name }, connection: "local-sandbox", module });
    const following = await make("follower");
    const pinned = await make("pinned", "follow@1.0.0");
    expect(following.component.module).toEqual({ rule: "organization", pinned: null, resolved: "follow@1.0.0", sha256: v1.sha256 });
    expect(pinned.component.module).toEqual({ rule: "custom", pinned: "follow@1.0.0", resolved: "follow@1.0.0", sha256: v1.sha256 });
    expect(following.job!.moduleSha256).toBe(v1.sha256);
    const check = (following.job!.preflight as { checks: { essential: string; resolvedTo: string }[] }).checks[0];
    expect(check.resolvedTo).toBe(`follow@1.0.0 (builtin, organization registry latest, sha256 ${v1.sha256})`);

    const v2 = await register({ name: "follow", version: "1.1.0", kind: "FollowBucket", source: { type: "git", url: repo.url, ref: "main" } });
    expect(v2.sha256).not.toBe(v1.sha256);
    const next = await createJob(t.db, org.actor(), { componentId: following.component.id, operation: "update" });
    expect(next.moduleSha256).toBe(v2.sha256);
    const stays = await createJob(t.db, org.actor(), { componentId: pinned.component.id, operation: "update" });
    expect(stays.moduleSha256).toBe(v1.sha256);
    expect((stays.preflight as { checks: { resolvedTo: string }[] }).checks[0].resolvedTo).toBe(`follow@1.0.0 (builtin, the component's custom module, sha256 ${v1.sha256})`);
    const [row] = await t.db.select({ sha: infraJobs.moduleSha256 }).from(infraJobs).where(eq(infraJobs.id, stays.id));
    expect(row.sha).toBe(v1.sha256);
    expect((await getModuleVersion(t.db, org.actor("viewer"), { name: "follow", version: "1.0.0" })).usedBy.map((u) => u.name)).toEqual(["pinned"]);

    // Pinning and unpinning are versions of the component, by name@version.
    const changed = await changeComponent(t.db, org.actor(), { id: following.component.id, module: "follow@1.0.0", deploy: false });
    expect(changed.component.module.rule).toBe("custom");
    const back = await changeComponent(t.db, org.actor(), { id: following.component.id, module: null, deploy: false });
    expect(back.component.module).toMatchObject({ rule: "organization", pinned: null, resolved: "follow@1.1.0" });
    await expect(changeComponent(t.db, org.actor(), { id: following.component.id, module: "follow@9.9.9" })).rejects.toThrow(/^Nothing was saved: follow has no version 9\.9\.9 \(it has 1\.1\.0, 1\.0\.0\)\. Pick one of FollowBucket's versions/);
    await expect(changeComponent(t.db, org.actor(), { id: following.component.id, module: "static-site@1.0.0" })).rejects.toThrow(/static-site@1\.0\.0 provisions StaticSite, not FollowBucket/);
  });

  it("refuses in preflight a module whose bundle is empty: nothing runs", async () => {
    const empty = bundleSha256({});
    await t.db.insert(moduleBundles).values({ sha256: empty, files: {}, size: 0, fileCount: 0 }).onConflictDoNothing();
    await t.db.insert(iacModules).values({ id: newId("iacModule"), orgId: org.orgId, scopeKey: org.orgId, kind: "StaticSite", name: "hollow", provisioner: "builtin", version: "5.0.0", source: "archive hollow.zip", sourceKind: "archive", bundleSha256: empty });
    const made = await createComponentAndDeploy(t.db, org.actor(), { environment: "dev", kind: "StaticSite", name: "hollow-site", spec: { site_name: "hollow" }, connection: "local-sandbox", module: "hollow@5.0.0" });
    expect(made.job).toMatchObject({ status: "completed", result: "failed", moduleSha256: null });
    expect(made.job!.reason).toBe(`Nothing ran: module hollow@5.0.0 has no files (its bundle is empty, sha256 ${empty}). Register a version with the module's files (planton module register), or pick another on the component, then run the job again.`);
  });
});

describe("a kind of the organization's own", () => {
  it("validates specs against the module's variables: types and validation blocks, each message naming its field", async () => {
    const repo = bareRepo("validated", [BUCKET_MODULE]);
    await register({ name: "validated", version: "1.0.0", kind: "ValidatedBucket", source: { type: "git", url: repo.url, ref: "main" } });
    const make = (name: string, spec: Record<string, unknown>) => createComponentAndDeploy(t.db, org.actor(), { environment: "dev", kind: "ValidatedBucket", name, spec, connection: "local-sandbox", deploy: false });
    const bad = await make("bad-bucket", { bucket: "much-too-long-a-name", copies: "two", labels: { a: 1, b: [1] } }).catch((e) => e);
    expect(bad).toBeInstanceOf(PlantonError);
    expect(bad.message).toBe("The spec does not match ValidatedBucket: copies must be a number. Nothing was saved.");
    const bad2 = await make("bad-bucket", { bucket: "much-too-long-a-name", labels: { a: [1] } }).catch((e) => e);
    expect(bad2.message).toBe("The spec does not match ValidatedBucket: bucket: bucket must be at most 12 characters; labels must be map(string): element \"a\": string required. Nothing was saved.");
    expect(bad2.field).toBe("spec.bucket");
    const ok = await make("good-bucket", { bucket: "short", labels: { team: "data", n: 3 } });
    expect(ok.component.spec).toEqual({ bucket: "short", copies: 2, labels: { team: "data", n: 3 } });
  });
});

describe("the platform's modules", () => {
  it("AwsS3Bucket's OpenTofu module has files (aws_s3_bucket with versioning), and its inputs are the kind's fields", async () => {
    const def = PLATFORM_CATALOG.find((k) => k.kind === "AwsS3Bucket")!;
    expect(def.module).toMatchObject({ provisioner: "tofu", source: "catalog/modules/aws-s3-bucket" });
    const bundle = readModuleBundle(def.module!.source)!;
    expect(Object.keys(bundle.files).length).toBeGreaterThan(0);
    expect(bundle.sha256).not.toBe(bundleSha256({}));
    const all = Object.values(bundle.files).join("\n");
    expect(all).toMatch(/resource "aws_s3_bucket" "this"/);
    expect(all).toMatch(/resource "aws_s3_bucket_versioning" "this"/);
    const facts = readModuleFacts(bundle.files);
    expect(facts.providers).toContain("aws");
    expect(facts.inputs.map((i) => [i.name, i.kind, i.required, i.default])).toEqual(def.fields.map((f) => [f.name, f.type, !!f.required, f.default]));
    const [row] = await t.db.select().from(iacModules).where(and(eq(iacModules.scopeKey, "platform"), eq(iacModules.kind, "AwsS3Bucket")));
    expect(row).toMatchObject({ name: "aws-s3-bucket", version: "1.0.0", bundleSha256: bundle.sha256, sourceKind: "builtin" });
  });
});
