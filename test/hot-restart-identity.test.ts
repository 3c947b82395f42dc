import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { after, describe, it } from 'node:test';
import { domainSocketId, domainSocketName, epochSockets } from '../supervisor/hot-restart/naming.js';
import { HotRestartError, SharedMemoryRegion, sharedMemoryPath } from '../supervisor/hot-restart/shared-memory.js';
import { SHARED_MEMORY_SIZE } from '../shared/version.js';
import { tempDir } from './helpers/cli.js';

const tmp = tempDir();
after(() => tmp.cleanup());

/** A pid that surely is not running: a child that has exited. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '0']);
  await new Promise((resolve) => child.once('exit', resolve));
  return child.pid!;
}

describe('hot-restart socket names', () => {
  it("follow Envoy's id rule: 10 × base id + epoch % 3", () => {
    assert.equal(domainSocketId(0, 1), 1);
    assert.equal(domainSocketId(7, 5), 72);
    assert.equal(domainSocketName('@proxy_domain_socket', 'parent', 0, 0), '@proxy_domain_socket_parent_0');
    assert.deepEqual(epochSockets('/run/proxy/sock', 2, 4), {
      ownParent: '/run/proxy/sock_parent_21',
      ownChild: '/run/proxy/sock_child_21',
      parentOfPrevious: '/run/proxy/sock_parent_20',
      childOfNext: '/run/proxy/sock_child_22',
    });
    assert.equal(epochSockets('@s', 0, 0).parentOfPrevious, undefined, 'epoch 0 has no parent');
    assert.equal(epochSockets('@s', 0, 2).childOfNext, '@s_child_0', 'slots cycle 0, 1, 2, 0');
  });
});

describe('the base-id shared memory', () => {
  const secret = randomBytes(32);

  it('is created by epoch 0 and opened by later epochs, keeping the first start time and the secret', () => {
    const region = SharedMemoryRegion.create(3, 1_700_000_000_123, secret, tmp.dir);
    assert.equal(region.path, `${tmp.dir}/proxy_shared_memory_30`);
    assert.equal(readFileSync(region.path).length, SHARED_MEMORY_SIZE);
    const opened = SharedMemoryRegion.open(3, tmp.dir);
    assert.equal(opened.originalStartTimeMs, 1_700_000_000_123);
    assert.deepEqual(opened.secret, secret);
    assert.equal(statSync(region.path).mode & 0o777, 0o600);
  });

  it("refuses a region that others may read: its secret would not be the deployment's alone", () => {
    const region = SharedMemoryRegion.create(7, Date.now(), secret, tmp.dir);
    chmodSync(region.path, 0o644);
    assert.throws(() => SharedMemoryRegion.open(7, tmp.dir), /shared memory region .*proxy_shared_memory_70 belongs to uid \d+ with mode 644: it is not this deployment's/);
  });

  it('refuses a later epoch when there is no region, naming the path and why', () => {
    assert.throws(() => SharedMemoryRegion.open(99, tmp.dir), (err) => err instanceof HotRestartError && /cannot open shared memory region .*proxy_shared_memory_990: no epoch 0 has run with base id 99/.test(err.message));
  });

  it('refuses a region of another layout or version', () => {
    const path = sharedMemoryPath(4, tmp.dir);
    SharedMemoryRegion.create(4, Date.now(), secret, tmp.dir);
    const data = readFileSync(path);
    data.writeUInt32LE(999, 4); // the version field
    writeFileSync(path, data);
    assert.throws(() => SharedMemoryRegion.open(4, tmp.dir), /Hot restart version mismatch .*\(999\.64, this build is 2\.64\)/);
    writeFileSync(path, data.subarray(0, 16));
    assert.throws(() => SharedMemoryRegion.open(4, tmp.dir), /Hot restart shared memory size mismatch/);
  });

  it('refuses a second epoch 0 on a base id a live process uses, and takes over one a dead process left', async () => {
    const path = sharedMemoryPath(5, tmp.dir);
    SharedMemoryRegion.create(5, Date.now(), secret, tmp.dir);
    const data = readFileSync(path);
    data.writeUInt32LE(process.ppid, 20); // newest_pid: a live process that is not this one
    writeFileSync(path, data);
    assert.throws(() => SharedMemoryRegion.create(5, Date.now(), secret, tmp.dir), new RegExp(`base id 5 is in use by pid ${process.ppid}`));
    data.writeUInt32LE(await deadPid(), 20);
    writeFileSync(path, data);
    SharedMemoryRegion.create(5, Date.now(), secret, tmp.dir);
  });

  it('sets "initializing" once; a live owner blocks the next, a dead owner is cleared (Envoy #33446)', async () => {
    const region = SharedMemoryRegion.create(6, Date.now(), secret, tmp.dir);
    region.beginInitializing();
    assert.equal(region.initializingPid(), process.pid);
    region.beginInitializing(); // the owner itself may ask again
    writeFileSync(`${region.path}.initializing`, String(process.ppid));
    assert.throws(() => region.beginInitializing(), new RegExp(`previous proxy process \\(pid ${process.ppid}\\) is still initializing`));
    writeFileSync(`${region.path}.initializing`, String(await deadPid()));
    region.beginInitializing();
    assert.equal(region.initializingPid(), process.pid);
    region.endInitializing();
    assert.ok(!existsSync(`${region.path}.initializing`));
  });
});
