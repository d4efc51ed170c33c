// The `s3` / `r2` kind on s3rver (npm), a real S3-compatible server the harness starts.
//
// s3rver does NOT enforce conditional writes: it ignores If-None-Match, so two lockers racing for the
// `.tflock` both succeed there. What s3rver can prove is proven on it (the conformance cases but the
// race, the lock file OpenTofu would see). The race and the 412 answer are proven against
// `ConditionalWriteFake` below: a small proxy in front of the same s3rver that is clearly a fake, and
// only adds what AWS S3 and R2 do, answering 412 to a PUT with If-None-Match: * on an existing key.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { randomUUID } from "node:crypto";
import { GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, S3Client } from "@aws-sdk/client-s3";
import { startS3rver, type S3Server } from "../test/object-stores";
import { conformance } from "./test/conformance";
import { storedStateOf } from "./rules";
import { StateBackend, StateLockedError } from "./rules";
import { LOCK_SUFFIX, openR2Store, openS3Store } from "./s3";

let server: S3Server;
beforeAll(async () => {
  server = await startS3rver();
});
afterAll(async () => {
  try {
    await fake?.stop();
  } finally {
    await server?.stop();
  }
});

const open = (endpoint = server.endpoint, prefix = "planton/") =>
  openS3Store({ bucket: server.bucket, prefix, region: server.region, endpoint, credentials: server.credentials });
const rawClient = () => new S3Client({ region: server.region, endpoint: server.endpoint, forcePathStyle: true, credentials: server.credentials });
const state = (serial: number, lineage: string) => new TextEncoder().encode(JSON.stringify({ version: 4, serial, lineage, resources: [] }));

conformance("s3 on s3rver", async () => open(), {
  unprovable: { racing: "s3rver ignores If-None-Match, so the conditional write that closes the race cannot be shown to hold; proven on ConditionalWriteFake below" },
});

/** A FAKE: a proxy to s3rver that enforces If-None-Match: * on PUT as S3 and R2 do (one PUT per key at a time). */
interface ConditionalWriteFake {
  endpoint: string;
  preconditionFailures: number;
  stop: () => Promise<void>;
}
let fake: ConditionalWriteFake | undefined;

async function startConditionalWriteFake(): Promise<ConditionalWriteFake> {
  const upstream = new URL(server.endpoint);
  const client = rawClient();
  const queues = new Map<string, Promise<unknown>>();
  const forward = (req: http.IncomingMessage, body: Buffer, res: http.ServerResponse) =>
    new Promise<void>((resolve, reject) => {
      const up = http.request({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
        answer.on("end", resolve);
      });
      up.on("error", reject);
      up.end(body);
    });
  const state = { endpoint: "", preconditionFailures: 0, stop: async () => {} };
  const proxy = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      if (req.method !== "PUT" || req.headers["if-none-match"] !== "*") return void forward(req, body, res).catch(() => res.destroy());
      const [, bucket, ...rest] = new URL(req.url ?? "/", "http://x").pathname.split("/");
      const key = decodeURIComponent(rest.join("/"));
      const run = async () => {
        const exists = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: key })).then(() => true, () => false);
        if (!exists) return forward(req, body, res);
        state.preconditionFailures++;
        res.writeHead(412, { "content-type": "application/xml" });
        res.end(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>PreconditionFailed</Code><Message>At least one of the pre-conditions you specified did not hold</Message><Condition>If-None-Match</Condition></Error>`);
      };
      const next = (queues.get(key) ?? Promise.resolve()).then(run, run);
      queues.set(key, next.catch(() => {}));
      next.catch(() => res.destroy());
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  state.endpoint = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  state.stop = async () => {
    client.destroy();
    proxy.closeAllConnections();
    await new Promise((resolve) => proxy.close(resolve));
  };
  return state;
}

/** Counts the store's requests by command name (HeadObjectCommand, PutObjectCommand, …). */
function countRequests(store: ReturnType<typeof openS3Store>): Record<string, number> {
  const counts: Record<string, number> = {};
  store.client.middlewareStack.add(
    (next, context) => async (args) => {
      const name = context.commandName ?? "unnamed";
      counts[name] = (counts[name] ?? 0) + 1;
      return next(args);
    },
    { step: "initialize", name: "countRequests" },
  );
  return counts;
}

describe("s3 kind on s3rver", () => {
  it("keeps the state at <prefix><key> and the lock at <prefix><key>.tflock, the lock info JSON OpenTofu's use_lockfile reads", async () => {
    const store = open();
    const b = new StateBackend(store);
    const key = `env/${randomUUID()}/terraform.tfstate`;
    const lock = await b.lock(key, { Operation: "OperationTypeApply", Who: "alice@ci", Info: "job 42" });
    await b.write(key, state(3, "L"), lock.ID);
    const raw = rawClient();
    const lockObject = await raw.send(new GetObjectCommand({ Bucket: server.bucket, Key: `planton/${key}${LOCK_SUFFIX}` }));
    expect(lockObject.ContentType).toBe("application/json");
    const info = JSON.parse(await lockObject.Body!.transformToString());
    expect(Object.keys(info).sort()).toEqual(["Created", "ID", "Info", "Operation", "Path", "Version", "Who"]);
    expect(info).toMatchObject({ ID: lock.ID, Operation: "OperationTypeApply", Who: "alice@ci", Info: "job 42", Path: `${server.bucket}/planton/${key}` });
    const stateObject = await raw.send(new GetObjectCommand({ Bucket: server.bucket, Key: `planton/${key}` }));
    expect(JSON.parse(await stateObject.Body!.transformToString())).toMatchObject({ serial: 3, lineage: "L" });
    // The lock file is not a state: list leaves it out, and keys are relative to the prefix.
    expect(await b.list(`env/`)).toContainEqual({ key, size: state(3, "L").byteLength });
    expect((await b.list(`env/`)).some((o) => o.key.endsWith(LOCK_SUFFIX))).toBe(false);
    // Unlocking under another ID is refused and leaves the lock file; under its ID it removes it.
    await expect(b.unlock(key, "someone-else")).rejects.toBeInstanceOf(StateLockedError);
    expect((await b.store.lockHolder(key))?.ID).toBe(lock.ID);
    await b.unlock(key, lock.ID);
    const left = await raw.send(new ListObjectsV2Command({ Bucket: server.bucket, Prefix: `planton/${key}` }));
    expect(left.Contents?.map((o) => o.Key)).toEqual([`planton/${key}`]);
    raw.destroy();
    await store.close();
  });

  it("takes the lock by a conditional write: the PUT of the .tflock carries If-None-Match: *", async () => {
    const store = open();
    const seen: { key: string; ifNoneMatch: string | undefined }[] = [];
    store.client.middlewareStack.add(
      (next, context) => async (args) => {
        const input = args.input as { Key?: string };
        const request = args.request as { headers: Record<string, string> };
        if (context.commandName === "PutObjectCommand") seen.push({ key: input.Key ?? "", ifNoneMatch: request.headers["if-none-match"] });
        return next(args);
      },
      { step: "finalizeRequest", name: "recordConditionalWrite" },
    );
    const key = `${randomUUID()}.tfstate`;
    const b = new StateBackend(store);
    const lock = await b.lock(key, { Operation: "OperationTypeApply" });
    await b.write(key, state(1, "L"), lock.ID);
    expect(seen).toEqual([
      { key: `planton/${key}${LOCK_SUFFIX}`, ifNoneMatch: "*" },
      { key: `planton/${key}`, ifNoneMatch: undefined },
    ]);
    await b.unlock(key, lock.ID);
    await store.close();
  });

  it("finds that s3rver ignores If-None-Match (asked once per store, probe deleted), so a create looks first and refuses a state already there", async () => {
    const store = open();
    const counts = countRequests(store);
    const doc = (lineage: string) => storedStateOf(state(1, lineage));
    const [a, b] = [`${randomUUID()}.tfstate`, `${randomUUID()}.tfstate`];
    expect(await store.create!(a, doc("first"))).toBe(true);
    expect(await store.create!(a, doc("second"))).toBe(false);
    expect(await store.create!(b, doc("third"))).toBe(true);
    expect(await store.enforcesConditionalWrites()).toBe(false);
    // The probe: two conditional PUTs and a DELETE, once; then a HEAD before each create, and a PUT only where nothing was there.
    expect(counts).toEqual({ PutObjectCommand: 2 + 2, DeleteObjectCommand: 1, HeadObjectCommand: 3 });
    expect([(await store.read(a))?.lineage, (await store.read(b))?.lineage]).toEqual(["first", "third"]);
    expect((await store.list()).filter((o) => o.key.includes("probe"))).toEqual([]);
    await Promise.all([store.delete(a), store.delete(b)]);
    await store.close();
  });

  it("reads a copy it wrote back by its ETag (the MD5 s3rver computed over the bytes it holds), and any other object's bytes by a GET", async () => {
    const store = open();
    const counts = countRequests(store);
    const key = `${randomUUID()}.tfstate`;
    const first = storedStateOf(state(1, "etag"));
    expect(await store.create!(key, first)).toBe(true);
    for (const k of Object.keys(counts)) delete counts[k];
    expect(await store.checksum!(key)).toBe(first.checksum);
    expect(counts).toEqual({ HeadObjectCommand: 1 });

    // Another writer replaces the object: its ETag is no longer the MD5 of what this store wrote, so the bytes decide.
    const other = storedStateOf(state(2, "etag"));
    const elsewhere = open();
    await elsewhere.write(key, other);
    expect(await store.checksum!(key)).toBe(other.checksum);
    expect(counts).toEqual({ HeadObjectCommand: 2, GetObjectCommand: 1 });
    // A store that did not write the object reads it; one that wrote it last confirms it by the HEAD.
    expect(await open().checksum!(key)).toBe(other.checksum);
    expect(await elsewhere.checksum!(key)).toBe(other.checksum);
    await store.delete(key);
    expect(await store.checksum!(key)).toBeNull();
    expect(await elsewhere.checksum!(key)).toBeNull();
    await Promise.all([store.close(), elsewhere.close()]);
  });

  it("r2 is the same store with an account endpoint", async () => {
    expect(openR2Store({ accountId: "abc123", bucket: "b", credentials: server.credentials }).kind).toBe("r2");
    const r2 = openR2Store({ accountId: "unused", endpoint: server.endpoint, bucket: server.bucket, prefix: "r2/", credentials: server.credentials });
    const b = new StateBackend(r2);
    const key = `${randomUUID()}.tfstate`;
    const lock = await b.lock(key, { Operation: "OperationTypeApply" });
    await b.write(key, state(1, "R"), lock.ID);
    expect((await b.read(key))?.lineage).toBe("R");
    await b.unlock(key, lock.ID);
    await r2.close();
  });
});

describe("s3 lock on ConditionalWriteFake (a fake proxy to s3rver that enforces If-None-Match as S3 and R2 do)", () => {
  beforeAll(async () => {
    fake = await startConditionalWriteFake();
  });

  it("a 412 on the lock file's conditional write is a StateLockedError naming the holder", async () => {
    const key = `${randomUUID()}.tfstate`;
    const holder = open(fake!.endpoint);
    const loser = open(fake!.endpoint);
    let held: Awaited<ReturnType<typeof holder.lock>> | undefined;
    // The holder takes the lock after the loser's check and before its PUT: only the conditional write can refuse it.
    loser.client.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === "PutObjectCommand" && !held) held = await holder.lock(key, { Operation: "OperationTypeApply", Who: "alice@ci" });
        return next(args);
      },
      { step: "finalizeRequest", name: "holderGoesFirst" },
    );
    const before = fake!.preconditionFailures;
    const refused = await loser.lock(key, { Operation: "OperationTypeApply", Who: "bob@ci" }).catch((e) => e);
    expect(fake!.preconditionFailures).toBe(before + 1);
    expect(refused).toBeInstanceOf(StateLockedError);
    expect(refused.holder).toMatchObject({ ID: held!.ID, Who: "alice@ci" });
    expect(refused.message).toMatch(/^Error acquiring the state lock/);
    expect((await holder.lockHolder(key))?.ID).toBe(held!.ID);
    await holder.unlock(key, held!.ID);
    await Promise.all([holder.close(), loser.close()]);
  });

  it("a create refuses a state already there, and one another writer put there after its check is refused by the conditional write", async () => {
    const key = `${randomUUID()}.tfstate`;
    const doc = (lineage: string) => storedStateOf(new TextEncoder().encode(JSON.stringify({ version: 4, serial: 1, lineage, resources: [] })));
    const store = open(fake!.endpoint);
    const other = open(fake!.endpoint);
    // The other writer goes first, just before this create's PUT, once armed below: only If-None-Match can refuse it.
    // (Added before the store's first request: a client builds each command's middleware chain once.)
    const raced = `${randomUUID()}.tfstate`;
    let armed = false;
    store.client.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === "PutObjectCommand" && armed) (armed = false), expect(await other.create!(raced, doc("other"))).toBe(true);
        return next(args);
      },
      { step: "finalizeRequest", name: "otherGoesFirst" },
    );
    await other.enforcesConditionalWrites(); // its probe's own 412 is not counted below
    expect(await store.create!(key, doc("first"))).toBe(true);
    expect(await store.create!(key, doc("second"))).toBe(false);
    armed = true;
    const before = fake!.preconditionFailures;
    expect(await store.create!(raced, doc("late"))).toBe(false);
    expect(fake!.preconditionFailures).toBe(before + 1);
    expect([(await store.read(key))?.lineage, (await store.read(raced))?.lineage]).toEqual(["first", "other"]);
    await Promise.all([store.delete(key), store.delete(raced)]);
    await Promise.all([store.close(), other.close()]);
  });

  it("finds that the server enforces If-None-Match, so a create is the conditional write alone (no HEAD) and still refuses a state already there", async () => {
    const store = open(fake!.endpoint);
    const counts = countRequests(store);
    const doc = (lineage: string) => storedStateOf(state(1, lineage));
    const key = `${randomUUID()}.tfstate`;
    expect(await store.enforcesConditionalWrites()).toBe(true);
    expect(await store.create!(key, doc("first"))).toBe(true);
    const before = fake!.preconditionFailures;
    expect(await store.create!(key, doc("second"))).toBe(false);
    expect(fake!.preconditionFailures).toBe(before + 1);
    expect(counts).toEqual({ PutObjectCommand: 2 + 2, DeleteObjectCommand: 1 });
    expect((await store.read(key))?.lineage).toBe("first");
    await store.delete(key);
    await store.close();
  });

  it("four writers racing for one lock: exactly one wins, the others get the winner's lock info", async () => {
    const key = `${randomUUID()}.tfstate`;
    const stores = [0, 1, 2, 3].map(() => open(fake!.endpoint));
    const results = await Promise.allSettled(stores.map((s, i) => s.lock(key, { Operation: "OperationTypeApply", Who: `writer-${i}` })));
    const won = results.filter((r) => r.status === "fulfilled");
    expect(won).toHaveLength(1);
    const winner = (won[0] as PromiseFulfilledResult<{ ID: string }>).value;
    for (const r of results.filter((r) => r.status === "rejected")) {
      expect((r as PromiseRejectedResult).reason).toBeInstanceOf(StateLockedError);
      expect((r as PromiseRejectedResult).reason.holder.ID).toBe(winner.ID);
    }
    await stores[0].forceUnlock(key);
    await Promise.all(stores.map((s) => s.close()));
  });
});
