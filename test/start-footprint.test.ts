import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { filterBootstrap, staticCluster } from './helpers/bootstraps.js';
import { tempDir } from './helpers/cli.js';
import { httpRequest, startProxy, stopAllProxies, waitFor } from './helpers/proxy.js';
import { startUpstream, type Upstream } from './helpers/upstream.js';

/**
 * What a process brings in at start stays with it for its life. Compiling any WebAssembly brings
 * in V8's WebAssembly compiler (0.8-1.0 MB of each process's resident memory), so no process of
 * the tree compiles any until its configuration needs it: xxHash64 compiles its module on first
 * use (shared/hashing.ts), and the bundles hide WebAssembly from long (scripts/bundle.mjs). Each
 * process reports the WebAssembly it compiles through a preloaded module. Likewise Node's own
 * modules: a worker serving HTTP/1.1 loads Node's parser, not node:http's client and server
 * (0.4 MB of its resident memory).
 */
const tmp = tempDir();
const hook = tmp.file('report-webassembly.cjs', `
const W = globalThis.WebAssembly;
const role = () => (process.argv[1].endsWith('proxy.js') ? 'supervisor' : process.argv[process.argv.length - 1]);
const report = (how) => process._rawDebug(\`[webassembly] \${role()}: \${how}\`);
for (const name of ['compile', 'instantiate', 'compileStreaming', 'instantiateStreaming']) {
  const original = W[name];
  W[name] = function (...args) { report(name); return original.apply(this, args); };
}
const Module = W.Module;
W.Module = function (...args) { report('new Module'); return new Module(...args); };
`);
/** Reports, as each process exits, the built-in modules it loaded. */
const modulesHook = tmp.file('report-modules.cjs', `
const role = () => (process.argv[1].endsWith('proxy.js') ? 'supervisor' : process.argv[process.argv.length - 1]);
process.on('exit', () => process._rawDebug(\`[modules] \${role()}: \${process.moduleLoadList.filter((m) => m.startsWith('NativeModule ')).map((m) => m.slice(13)).join(' ')}\`));
`);
const upstreams: Upstream[] = [];

after(async () => {
  await stopAllProxies();
  for (const u of upstreams) await u.close();
  tmp.cleanup();
});

describe('the tree at start', () => {
  it('compiles no WebAssembly until the configuration needs it', async () => {
    const upstream = await startUpstream('A');
    upstreams.push(upstream);
    const routes = [
      { match: { prefix: '/hashed' }, route: { cluster: 'ring', hash_policy: [{ header: { header_name: 'x-user' } }] } },
      { match: { prefix: '/' }, route: { cluster: 'backend' } },
    ];
    const bootstrap = filterBootstrap('footprint', [], routes, upstream.port);
    (bootstrap.static_resources as { clusters: object[] }).clusters.push({ ...staticCluster('ring', upstream.port), lb_policy: 'RING_HASH' });
    const proxy = await startProxy(bootstrap, ['--concurrency', '1'], { NODE_OPTIONS: `--require ${hook.replaceAll(' ', '\\ ')}` });
    const port = proxy.ports.get('footprint');
    assert.equal((await httpRequest(`http://127.0.0.1:${port}/`)).body, 'A');
    assert.equal((await httpRequest(`http://${proxy.admin}/config_dump`)).status, 200);
    assert.doesNotMatch(proxy.output(), /\[webassembly\]/, 'a request that hashes nothing, and the admin, compile no WebAssembly');
    // The hook sees what it should: a request that hashes compiles xxHash64's module, in the worker.
    assert.equal((await httpRequest(`http://127.0.0.1:${port}/hashed`, { headers: { 'x-user': 'u1' } })).body, 'A');
    await waitFor('the worker to report its WebAssembly', () => /\[webassembly\] worker_0: new Module/.test(proxy.output()) || undefined);
    assert.doesNotMatch(proxy.output(), /\[webassembly\] (supervisor|admin)/);
  });

  it("serves HTTP/1.1 without loading node:http's client or server in the worker", async () => {
    const upstream = await startUpstream('B');
    upstreams.push(upstream);
    const bootstrap = filterBootstrap('plain', [], [{ match: { prefix: '/' }, route: { cluster: 'backend' } }], upstream.port);
    const proxy = await startProxy(bootstrap, ['--concurrency', '1'], { NODE_OPTIONS: `--require ${modulesHook.replaceAll(' ', '\\ ')}` });
    assert.equal((await httpRequest(`http://127.0.0.1:${proxy.ports.get('plain')}/`)).body, 'B');
    await proxy.stop();
    const worker = /\[modules\] worker_0: (.*)/.exec(proxy.output());
    assert.ok(worker, 'the worker reported its modules as it exited');
    const loaded = worker[1]!.split(' ');
    assert.ok(loaded.includes('_http_common'), "Node's parser is loaded");
    for (const name of ['http', '_http_server', '_http_client', '_http_agent', '_http_outgoing']) assert.ok(!loaded.includes(name), `${name} is not loaded`);
  });
});
