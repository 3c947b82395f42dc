import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { after, describe, it } from 'node:test';
import { establishIdentity, type IdentityOptions } from '../supervisor/hot-restart/identity.js';
import { tempDir } from './helpers/cli.js';

const tmp = tempDir();
after(() => tmp.cleanup());
const socketPath = `@proxy_identity_test_${process.pid}`;

function options(over: Partial<IdentityOptions>): IdentityOptions {
  return {
    baseId: 0, useDynamicBaseId: false, baseIdPath: '', restartEpoch: 0, socketPath, socketMode: 0, trustRoot: false, startTimeMs: Date.now(),
    onRequest: () => ({}), sharedMemoryDir: tmp.dir, ...over,
  };
}

describe('hot-restart identity', () => {
  it('binds the sockets, creates the region, marks this epoch initializing, and writes --base-id-path', () => {
    const id = establishIdentity(options({ baseId: 11, baseIdPath: `${tmp.dir}/base-id` }));
    try {
      assert.equal(id.baseId, 11);
      assert.equal(readFileSync(`${tmp.dir}/base-id`, 'utf8'), '11', 'bare decimal, no newline');
      assert.equal(id.region.initializingPid(), process.pid);
      // Envoy's words, then the cause and what to pass at that epoch.
      assert.throws(() => establishIdentity(options({ baseId: 11 })), /^HotRestartError: unable to bind domain socket with base_id=110, id=0, errno=98 \(see --base-id option\): another proxy on this machine uses base id 11; pass another --base-id, or --use-dynamic-base-id \(with --base-id-path to learn the one picked\)$/);
    } finally {
      id.channel.close();
    }
  });

  it('--use-dynamic-base-id skips ids whose socket slot is taken', () => {
    const taken = establishIdentity(options({ baseId: 12 }));
    const ids = [12, 12, 13];
    const dynamic = establishIdentity(options({ useDynamicBaseId: true, pickBaseId: () => ids.shift()!, baseIdPath: `${tmp.dir}/dynamic` }));
    try {
      assert.equal(dynamic.baseId, 13);
      assert.equal(readFileSync(`${tmp.dir}/dynamic`, 'utf8'), '13');
    } finally {
      dynamic.channel.close();
      taken.channel.close();
    }
  });

  it('--use-dynamic-base-id gives up after 100 taken ids', () => {
    const taken = establishIdentity(options({ baseId: 14 }));
    let tries = 0;
    try {
      assert.throws(() => establishIdentity(options({ useDynamicBaseId: true, pickBaseId: () => (tries++, 14) })), /unable to select a dynamic base id/);
      assert.equal(tries, 100);
    } finally {
      taken.channel.close();
    }
  });

  it('a later epoch opens the region epoch 0 made, and its slot is its own', () => {
    const zero = establishIdentity(options({ baseId: 15 }));
    zero.region.endInitializing();
    const one = establishIdentity(options({ baseId: 15, restartEpoch: 1 }));
    try {
      assert.equal(one.region.originalStartTimeMs, zero.region.originalStartTimeMs);
      // Epoch 1 is still initializing (as another process would hold the marker, here the test's parent):
      writeFileSync(`${one.region.path}.initializing`, String(process.ppid));
      assert.throws(() => establishIdentity(options({ baseId: 15, restartEpoch: 2 })), /previous proxy process \(pid \d+\) is still initializing/);
      // Epoch 1 again, while it runs: the next epoch is named.
      assert.throws(() => establishIdentity(options({ baseId: 15, restartEpoch: 1 })), /errno=98 \(see --base-id option\): epoch 1 of base id 15 is running already; a hot restart takes the next epoch \(--restart-epoch 2 --base-id 15\), another proxy another --base-id$/);
    } finally {
      one.channel.close();
      zero.channel.close();
    }
  });
});
