// The `azure_blob` kind on azurite (npm), Microsoft's Azure Storage emulator with real lease semantics:
// every conformance case runs here, two writers racing included.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomUUID } from "node:crypto";
import { BlobServiceClient, RestError, type ContainerClient } from "@azure/storage-blob";
import { startAzurite, type AzuriteServer } from "../test/object-stores";
import { conformance } from "./test/conformance";
import { StateBackend } from "./rules";
import { LOCK_INFO_METADATA_KEY, openAzureBlobStore } from "./azure-blob";

const CONTAINER = "tfstate";
let server: AzuriteServer;
let raw: ContainerClient;
beforeAll(async () => {
  server = await startAzurite();
  // Another client of the same account: what OpenTofu, or any other writer, would see and do.
  raw = BlobServiceClient.fromConnectionString(server.connectionString).getContainerClient(CONTAINER);
  await raw.create();
});
afterAll(async () => {
  await server?.stop();
});

const open = () => openAzureBlobStore({ connectionString: server.connectionString, container: CONTAINER, prefix: "planton/" });
const state = (serial: number, lineage: string) => new TextEncoder().encode(JSON.stringify({ version: 4, serial, lineage, resources: [] }));

conformance("azure_blob on azurite", async () => open());

describe("azure_blob kind on azurite", () => {
  it("locks by an infinite lease on the state blob (a placeholder when there is no state), with the lock info as base64 JSON in its metadata", async () => {
    const b = new StateBackend(open());
    const key = `env/${randomUUID()}/terraform.tfstate`;
    const lock = await b.lock(key, { Operation: "OperationTypeApply", Who: "alice@ci", Info: "job 42" });
    const blob = raw.getBlockBlobClient(`planton/${key}`);
    const props = await blob.getProperties();
    expect([props.leaseState, props.leaseStatus, props.leaseDuration, props.contentLength]).toEqual(["leased", "locked", "infinite", 0]);
    const info = JSON.parse(Buffer.from(props.metadata![LOCK_INFO_METADATA_KEY], "base64").toString("utf8"));
    expect(info).toMatchObject({ ID: lock.ID, Operation: "OperationTypeApply", Who: "alice@ci", Info: "job 42", Path: `${CONTAINER}/planton/${key}` });
    // The placeholder is not a state.
    expect(await b.read(key)).toBeNull();
    expect(await b.list("env/")).toEqual([]);

    // The write goes with the lease and keeps the lock info on the blob.
    await b.write(key, state(2, "L"), lock.ID);
    const written = await blob.getProperties();
    expect([written.leaseState, written.contentLength]).toEqual(["leased", state(2, "L").byteLength]);
    expect(written.metadata?.[LOCK_INFO_METADATA_KEY]).toBe(props.metadata![LOCK_INFO_METADATA_KEY]);

    await b.unlock(key, lock.ID);
    const released = await blob.getProperties();
    expect(released.leaseState).toBe("available");
    expect(released.metadata?.[LOCK_INFO_METADATA_KEY]).toBeUndefined();
    expect((await b.read(key))?.serial).toBe(2);
  });

  it("another client's write without the lease is refused by azurite while the state is locked, and the state is unchanged", async () => {
    const b = new StateBackend(open());
    const key = `${randomUUID()}.tfstate`;
    const lock = await b.lock(key, { Operation: "OperationTypeApply" });
    await b.write(key, state(1, "L"), lock.ID);
    const intruder = raw.getBlockBlobClient(`planton/${key}`);
    const refused = await intruder.upload("{}", 2).catch((e) => e);
    expect(refused).toBeInstanceOf(RestError);
    expect([refused.statusCode, refused.code]).toEqual([412, "LeaseIdMissing"]);
    const deleted = await intruder.delete().catch((e) => e);
    expect(deleted).toBeInstanceOf(RestError);
    expect((await b.read(key))?.serial).toBe(1);
    await b.unlock(key, lock.ID);
    // Once unlocked, the same write goes through: it was the lease that refused it.
    await intruder.upload("{}", 2);
  });

  it("force-unlock breaks the lease; unlocking under another ID leaves it held", async () => {
    const first = new StateBackend(open());
    const second = new StateBackend(open());
    const key = `${randomUUID()}.tfstate`;
    const lock = await first.lock(key, { Operation: "OperationTypeApply", Who: "alice@ci" });
    await expect(second.unlock(key, randomUUID())).rejects.toThrow(/^Error acquiring the state lock/);
    expect((await raw.getBlockBlobClient(`planton/${key}`).getProperties()).leaseState).toBe("leased");
    expect(await second.forceUnlock(key)).toMatchObject({ ID: lock.ID, Who: "alice@ci" });
    const props = await raw.getBlockBlobClient(`planton/${key}`).getProperties();
    // Broken, then available once the metadata is rewritten: either way no lease is held.
    expect(["broken", "available"]).toContain(props.leaseState);
    expect(props.metadata?.[LOCK_INFO_METADATA_KEY]).toBeUndefined();
    // The first holder's lease is gone: its write is refused by the rules and its unlock by the store.
    await expect(first.write(key, state(1, "L"), lock.ID)).rejects.toThrow(/does not hold its lock/);
    expect(await second.forceUnlock(key)).toBeNull();
  });
});
