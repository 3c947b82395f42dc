import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, describe, it } from 'node:test';
import { minimalBootstrap } from './helpers/bootstraps.js';
import { runProxy, tempDir } from './helpers/cli.js';
import { listenOnFreePort } from './helpers/upstream.js';

const tmp = tempDir();
after(() => tmp.cleanup());


describe('--mode validate', () => {
  it('prints an OK line and exits 0 for the bundled example', async () => {
    const out = await runProxy(['--mode', 'validate', '-c', 'examples/front-proxy.yaml']);
    assert.equal(out.code, 0, out.stderr);
    assert.equal(out.stdout, "configuration 'examples/front-proxy.yaml' OK\n");
  });

  it('accepts --config-yaml alone, naming an empty path', async () => {
    const out = await runProxy(['--mode', 'validate', '--config-yaml', JSON.stringify(minimalBootstrap())]);
    assert.equal(out.code, 0, out.stderr);
    assert.equal(out.stdout, "configuration '' OK\n");
  });

  it('prints every error as a critical line and exits 1, with nothing on stdout', async () => {
    const doc = minimalBootstrap() as Record<string, any>;
    doc.static_resources.clusters[0].bogus = true;
    doc.admin.address.socket_address.port_value = 'x';
    const path = tmp.file('bad.yaml', JSON.stringify(doc));
    const out = await runProxy(['--mode', 'validate', '-c', path]);
    assert.equal(out.code, 1);
    assert.equal(out.stdout, '');
    const lines = out.stderr.trim().split('\n');
    assert.equal(lines.length, 2, out.stderr);
    for (const line of lines) assert.match(line, new RegExp(`\\[critical\\]\\[main\\] .*error initializing configuration '${path}': `));
    assert.match(out.stderr, /static_resources\.clusters\[0\]\.bogus: unknown field/);
    assert.match(out.stderr, /admin\.address\.socket_address\.port_value: expected an integer/);
  });

  it('binds no socket and touches no shared memory', async () => {
    // The admin port is taken: a validating proxy must not notice, because it binds nothing.
    const blocker = await listenOnFreePort();
    const port = (blocker.address() as { port: number }).port;
    const doc = minimalBootstrap() as Record<string, any>;
    doc.admin.address.socket_address.port_value = port;
    doc.static_resources.listeners[0].address.socket_address.port_value = port;
    // A base id no other proxy uses (pids are unique, and far above what --use-dynamic-base-id picks).
    const baseId = 100_000 + process.pid;
    const region = `/dev/shm/proxy_shared_memory_${baseId * 10}`;
    try {
      const out = await runProxy(['--mode', 'validate', '--base-id', String(baseId), '-c', tmp.file('taken.yaml', JSON.stringify(doc))]);
      assert.equal(out.code, 0, out.stderr);
    } finally {
      blocker.close();
    }
    assert.ok(!existsSync(region) && !existsSync(`${region}.initializing`), 'no shared memory for its base id');
  });

  it('agrees with serve: what validates but cannot serve (its port is taken) fails with a message naming why, and leaves nothing in /dev/shm', async () => {
    const blocker = await listenOnFreePort();
    const port = (blocker.address() as { port: number }).port;
    const doc = minimalBootstrap() as Record<string, any>;
    doc.admin.address.socket_address.port_value = 0;
    doc.static_resources.listeners[0].address.socket_address.port_value = port;
    const baseId = 200_000 + process.pid;
    const region = `/dev/shm/proxy_shared_memory_${baseId * 10}`;
    try {
      const path = tmp.file('serve-taken.yaml', JSON.stringify(doc));
      const validated = await runProxy(['--mode', 'validate', '-c', path]);
      assert.equal(validated.code, 0, validated.stderr);
      const served = await runProxy(['--base-id', String(baseId), '--concurrency', '1', '-c', path]);
      assert.equal(served.code, 1);
      assert.match(served.stderr, new RegExp(`cannot bind '127\\.0\\.0\\.1:${port}' for listener 'ingress': Address already in use`));
    } finally {
      blocker.close();
    }
    assert.ok(!existsSync(region) && !existsSync(`${region}.initializing`), 'its shared memory is gone');
  });

  it('logs warnings (here: an allowed unknown field) without failing', async () => {
    const doc = minimalBootstrap() as Record<string, any>;
    doc.static_resources.clusters[0].future_field = 1;
    const out = await runProxy(['--mode', 'validate', '--allow-unknown-static-fields', '-c', tmp.file('unknown.yaml', JSON.stringify(doc))]);
    assert.equal(out.code, 0, out.stderr);
    assert.match(out.stderr, /\[warning\]\[main\] .*unknown field 'future_field' in envoy\.config\.cluster\.v3\.Cluster/);
  });

  it('refuses an invalid bootstrap whatever the format', async () => {
    const out = await runProxy(['--mode', 'validate', '-c', tmp.file('bad.pb_text', 'admin { nonsense: 1 }')]);
    assert.equal(out.code, 1);
    assert.match(out.stderr, /admin\.nonsense: unknown field in envoy\.config\.bootstrap\.v3\.Admin/);
  });
});
