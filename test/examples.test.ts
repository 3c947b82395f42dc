import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequestRaw } from 'node:http';
import { after, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { load } from 'js-yaml';
import { repoRoot, runProxy, tempDir } from './helpers/cli.js';
import { TestControlPlane } from './helpers/control-plane.js';
import { httpRequest, startProxy, statValue, stopAllProxies, waitFor } from './helpers/proxy.js';
import { closedPort } from './helpers/upstream.js';

const tmp = tempDir();
after(async () => {
  await stopAllProxies();
  tmp.cleanup();
});

const bootstraps = readdirSync('examples').filter((f) => /\.(ya?ml|json|pb_text)$/.test(f));
/** Examples driven by a control plane, with the resources file scripts/control-plane.ts serves them. */
const CONTROL_PLANES: Record<string, string> = { 'ads.yaml': 'examples/ads/resources.yaml' };

/**
 * An example as written, except that the admin interface and every listener take port 0, so the
 * test can run beside anything else on the machine. Clusters keep their addresses.
 */
function onPortZero(file: string): Record<string, any> {
  const doc = load(readFileSync(`examples/${file}`, 'utf8')) as Record<string, any>;
  const zero = (address: { socket_address?: { port_value?: number } } | undefined) => {
    if (address?.socket_address) address.socket_address.port_value = 0;
  };
  zero(doc.admin?.address);
  for (const listener of doc.static_resources?.listeners ?? []) zero(listener.address);
  // Listeners from a file (LDS): a copy of the file with their ports at 0 too.
  const lds = doc.dynamic_resources?.lds_config?.path_config_source;
  if (lds?.path) {
    const response = load(readFileSync(lds.path, 'utf8')) as { resources?: { address?: { socket_address?: { port_value?: number } } }[] };
    for (const listener of response.resources ?? []) zero(listener.address);
    lds.path = tmp.file(`lds-${file}.json`, JSON.stringify(response));
  }
  return doc;
}

// Every bootstrap under examples/ is one a user may copy: each must validate, and start, on a
// machine where nothing was prepared by hand (files they name come with them).
describe('examples', () => {
  for (const file of bootstraps) {
    it(`examples/${file} validates`, async () => {
      const out = await runProxy(['--mode', 'validate', '-c', `examples/${file}`]);
      assert.equal(out.code, 0, out.stderr);
      assert.equal(out.stdout, `configuration 'examples/${file}' OK\n`);
    });
  }

  for (const file of bootstraps.filter((f) => !f.endsWith('.pb_text') && !(f in CONTROL_PLANES))) {
    it(`examples/${file} starts and goes LIVE`, async () => {
      const proxy = await startProxy(onPortZero(file), ['--concurrency', '1']);
      assert.equal((await httpRequest(`http://${proxy.admin}/ready`)).body, 'LIVE\n');
      assert.equal(await proxy.stop(), 0);
    });
  }

  // An example driven by a control plane runs against the one it names (scripts/control-plane.ts
  // serves that file), here on port 0 with its listeners on port 0 too, and changes live.
  for (const [file, resourcesFile] of Object.entries(CONTROL_PLANES)) {
    it(`examples/${file} serves what its control plane (${resourcesFile}) sends, and follows a change`, async () => {
      const resources = load(readFileSync(resourcesFile, 'utf8')) as Record<string, any[]>;
      const listenerPorts = new Map<number, string>();
      for (const l of resources.listeners ?? []) {
        listenerPorts.set(l.address.socket_address.port_value, l.name);
        l.address.socket_address.port_value = 0;
      }
      const cp = await TestControlPlane.start();
      try {
        cp.setAll(resources, 'v1');
        const doc = onPortZero(file);
        doc.static_resources.clusters.find((c: any) => c.name === 'xds').load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address.port_value = cp.port;
        const proxy = await startProxy(doc, ['--concurrency', '1']);
        const ports = new Map<string, number>();
        await waitFor('the listeners', async () => {
          const json = JSON.parse((await httpRequest(`http://${proxy.admin}/listeners?format=json`)).body) as { listener_statuses: { name: string; local_address: { socket_address: { port_value: number } } }[] };
          for (const l of json.listener_statuses) ports.set(l.name, l.local_address.socket_address.port_value);
          return ports.size === resources.listeners!.length || undefined;
        });
        // The endpoints name the example's listeners by their ports there: here, by their ports now.
        const endpoint = resources.endpoints![0].endpoints[0].lb_endpoints[0].endpoint.address.socket_address;
        endpoint.port_value = ports.get(listenerPorts.get(endpoint.port_value)!)!;
        cp.setAll(resources, 'v2');
        const edge = `http://127.0.0.1:${ports.get('edge')}/`;
        await waitFor('blue', async () => ((await httpRequest(edge)).body === 'blue\n' ? true : undefined));
        endpoint.port_value = ports.get('green')!;
        cp.setAll(resources, 'v3');
        await waitFor('green, without a restart', async () => ((await httpRequest(edge)).body === 'green\n' ? true : undefined));
        assert.match((await httpRequest(`http://${proxy.admin}/config_status`)).body, /^route_configuration edge-routes, active, version 'v\d'/m);
        assert.equal(await proxy.stop(), 0);
      } finally {
        cp.stop();
      }
    });
  }
});

// Examples run side by side: no two bind the same port (admin, listeners, those their xDS files
// bring), and each says to start with --use-dynamic-base-id (base id 0 is one per machine).
describe('examples side by side', () => {
  /** The ports an example binds: its admin's, its listeners', and those of listeners its files or control plane bring. */
  const bound = (file: string): number[] => {
    const doc = load(readFileSync(`examples/${file}`, 'utf8')) as Record<string, any>;
    const ports: number[] = [];
    const add = (a: any) => a?.socket_address?.port_value && ports.push(a.socket_address.port_value);
    add(doc.admin?.address);
    for (const l of doc.static_resources?.listeners ?? []) add(l.address);
    const companions = [doc.dynamic_resources?.lds_config?.path_config_source?.path, CONTROL_PLANES[file]].filter(Boolean) as string[];
    for (const path of companions) {
      const more = load(readFileSync(path, 'utf8')) as { resources?: any[]; listeners?: any[] };
      for (const l of [...(more.resources ?? []), ...(more.listeners ?? [])]) add(l.address);
    }
    // A listener a later version brings (examples/lds/v2.yaml) binds too.
    if (file === 'lds-file.yaml') for (const l of (load(readFileSync('examples/lds/v2.yaml', 'utf8')) as { resources: any[] }).resources) add(l.address);
    return [...new Set(ports)];
  };

  it('no two examples bind the same port', () => {
    const owner = new Map<number, string>();
    for (const file of bootstraps.filter((f) => /\.ya?ml$/.test(f))) {
      for (const port of bound(file)) {
        assert.ok(!owner.has(port), `port ${port}: examples/${owner.get(port)} and examples/${file}`);
        owner.set(port, file);
      }
    }
    assert.ok(owner.size > 30, `${owner.size} ports`);
  });

  it('two run at once, one of them changed live on its copy, and the checkout stays as it was', async () => {
    const git = (...args: string[]) => spawnSync('git', args, { cwd: repoRoot, encoding: 'utf8' });
    const before = git('status', '--porcelain', '--', 'examples').stdout;
    const copy = tmp.file('cds-copy-clusters.yaml', readFileSync('examples/cds/clusters.yaml', 'utf8'));
    const [routing, cds] = await Promise.all([
      startProxy(onPortZero('routing.yaml'), ['--concurrency', '1']),
      startProxy(onPortZero('cds-file.yaml'), ['--concurrency', '1', '--config-yaml', `{dynamic_resources: {cds_config: {path_config_source: {path: ${copy}}}}}`]),
    ]);
    assert.notEqual(routing.baseId, cds.baseId);
    for (const p of [routing, cds]) assert.equal((await httpRequest(`http://${p.admin}/ready`)).body, 'LIVE\n');
    // The example's step, on the copy: the green version renamed into place.
    writeFileSync(`${copy}.next`, readFileSync('examples/cds/green.yaml', 'utf8'));
    renameSync(`${copy}.next`, copy);
    await waitFor('the green version', async () => ((await httpRequest(`http://${cds.admin}/stats?filter=cluster_manager.cds.version_text`)).body.includes('green') ? true : undefined));
    await Promise.all([routing.stop(), cds.stop()]);
    assert.equal(git('status', '--porcelain', '--', 'examples').stdout, before);
  });

  it('every start line of an example, in it and in the docs, takes a base id of its own', () => {
    for (const path of [...bootstraps.map((f) => `examples/${f}`), 'README.md', 'docs/xds.md', 'docs/upstreams.md']) {
      for (const line of readFileSync(path, 'utf8').split('\n')) {
        if (/proxy -c examples\/[\w-]+\.(ya?ml|json)/.test(line) && !/RESTART_EPOCH|--mode validate/.test(line)) assert.match(line, /--use-dynamic-base-id/, `${path}: ${line}`);
      }
    }
  });
});

const curl = spawnSync('sh', ['-c', 'command -v curl'], { encoding: 'utf8' }).stdout.trim();

describe("the TLS section of docs/upstreams.md", () => {
  it('works as written (ports aside), with the certificate that comes with the example', { skip: curl ? false : 'curl is not installed (apt-get install curl; .ci/run installs it when it runs as root)' }, async () => {
    const readme = readFileSync('docs/upstreams.md', 'utf8');
    const section = readme.slice(readme.indexOf('\n## TLS\n'));
    const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1];
    assert.ok(block, 'the TLS section has a shell block');
    const [start, ...commands] = block.trim().split('\n');
    assert.equal(start, 'npx proxy -c examples/tls.yaml --use-dynamic-base-id');
    assert.equal(commands.length, 4, block);

    const proxy = await startProxy(onPortZero('tls.yaml'), ['--concurrency', '1']);
    const port = proxy.ports.get('front')!;
    const run = promisify(execFile);
    const outputs: string[] = [];
    for (const line of commands) {
      const [command, expected] = line.split(/\s+# /) as [string, string];
      assert.match(command, /^curl /);
      const local = command.replaceAll('localhost:10443', `localhost:${port}`).replaceAll('127.0.0.1:9916', proxy.admin);
      const { stdout } = await run('sh', ['-c', local], { cwd: repoRoot });
      outputs.push(stdout);
      // Each line's comment says what it prints; /certs describes its JSON instead.
      if (!command.endsWith('/certs')) assert.ok(stdout.includes(expected), `${local}\n  printed ${JSON.stringify(stdout)}\n  docs/upstreams.md says: ${expected}`);
    }
    const certs = JSON.parse(outputs[3]!) as { certificates: { cert_chain: { path: string; days_until_expiration: string; subject_alt_names: object[] }[] }[] };
    const served = certs.certificates[0]!.cert_chain[0]!;
    assert.equal(served.path, 'examples/certs/cert.pem');
    assert.deepEqual(served.subject_alt_names, [{ dns: 'localhost' }, { ip_address: '127.0.0.1' }]);
    assert.ok(Number(served.days_until_expiration) > 365, 'the throw-away certificate does not expire under its users');
    assert.equal(await proxy.stop(), 0);
  });
});

describe('the systemd example', () => {
  const analyze = spawnSync('sh', ['-c', 'command -v systemd-analyze'], { encoding: 'utf8' }).stdout.trim();
  it('is a unit systemd-analyze verify accepts', { skip: analyze ? false : 'systemd-analyze is not installed (apt-get install systemd; .ci/run installs it when it runs as root)' }, () => {
    const r = spawnSync(analyze, ['verify', 'examples/systemd/proxy.service'], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stderr.trim(), '', 'no warnings');
  });

  it('starts the proxy with the restart epoch the restarter gives it', () => {
    const script = readFileSync('examples/systemd/proxy-start.sh', 'utf8');
    assert.match(script, /^exec proxy /m);
    assert.match(script, /--restart-epoch "\$RESTART_EPOCH"/);
    assert.ok((statSync('examples/systemd/proxy-start.sh').mode & 0o111) !== 0, 'executable');
  });
});

// examples/ratelimit.yaml with the service its comments start (scripts/ratelimit-service.ts and
// examples/ratelimit/limits.yaml), on port 0; its backend played by a server of the test.
describe('the global rate limit example', () => {
  it('limits a user to 3 requests a minute and a VIP to 100, with X-RateLimit headers, as its comments say', async () => {
    const { startRateLimitService } = await import('../scripts/ratelimit-service.js');
    const service = await startRateLimitService(load(readFileSync('examples/ratelimit/limits.yaml', 'utf8')) as never);
    const backend = createServer((_req, res) => res.end('hello from the backend\n'));
    await new Promise<void>((resolve) => backend.listen(0, '127.0.0.1', resolve));
    try {
      const doc = onPortZero('ratelimit.yaml');
      const portOf = (name: string) => doc.static_resources.clusters.find((c: any) => c.name === name).load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address;
      portOf('ratelimit').port_value = service.port;
      portOf('backend').port_value = (backend.address() as { port: number }).port;
      const proxy = await startProxy(doc, ['--concurrency', '1']);
      const url = `http://127.0.0.1:${proxy.ports.get('edge')}/api`;
      const codes = [];
      for (let i = 0; i < 4; i++) codes.push((await httpRequest(url, { headers: { 'x-user': 'ann' } })).status);
      assert.deepEqual(codes, [200, 200, 200, 429]);
      const vip = await httpRequest(url, { headers: { 'x-user': 'vip' } });
      assert.equal(vip.status, 200);
      assert.match(String(vip.headers['x-ratelimit-limit']), /100;w=60/);
      assert.ok(Number(await statValue(proxy, 'cluster.backend.ratelimit.over_limit')) >= 1);
      assert.equal(await proxy.stop(), 0);
    } finally {
      backend.close();
      await service.close();
    }
  });
});

// examples/websocket.yaml with the echo server its comments start (scripts/websocket-echo.ts), on port 0.
describe('the WebSocket example', () => {
  it('echoes across its HTTP/2 hop and refuses /quiet with 403, as its comments say', async () => {
    const { startWebSocketEcho, sendMessages } = await import('../scripts/websocket-echo.js');
    const echo = await startWebSocketEcho();
    try {
      const doc = onPortZero('websocket.yaml');
      const endpoint = (name: string) => doc.static_resources.clusters.find((c: any) => c.name === name).load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address;
      endpoint('echo').port_value = echo.port;
      const inner = doc.static_resources.listeners.find((l: any) => l.name === 'inner');
      // The hop's cluster points at the inner listener: it gets a port known beforehand (one just free).
      const innerPort = await closedPort();
      inner.address.socket_address.port_value = innerPort;
      endpoint('inner').port_value = innerPort;
      const running = await startProxy(doc, ['--concurrency', '1']);
      const edge = `ws://127.0.0.1:${running.ports.get('edge')}`;
      assert.deepEqual(await sendMessages(`${edge}/chat`, ['hello', 'again']), ['hello', 'again']);
      await assert.rejects(sendMessages(`${edge}/quiet`, ['hi']), /the handshake was answered 403/);
      assert.equal(await statValue(running, 'cluster.inner.upstream_rq_200'), 1);
      assert.equal(await statValue(running, 'http.edge.downstream_rq_ws_on_non_ws_route'), 1);
    } finally {
      await echo.close();
    }
  });
});

// examples/tunnel.yaml on ports known beforehand (its clusters point at its own listener and admin interface).
describe('the tunnel example', () => {
  it("carries HTTP to the admin interface inside an HTTP/2 CONNECT, and terminates a client's own CONNECT, as its comments say", async () => {
    const doc = onPortZero('tunnel.yaml');
    const endpoint = (name: string) => doc.static_resources.clusters.find((c: any) => c.name === name).load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address;
    const [tunnelEnd, admin] = [await closedPort(), await closedPort()];
    doc.static_resources.listeners.find((l: any) => l.name === 'tunnel-end').address.socket_address.port_value = tunnelEnd;
    endpoint('tunnel').port_value = tunnelEnd;
    doc.admin.address.socket_address.port_value = admin;
    endpoint('admin').port_value = admin;
    const proxy = await startProxy(doc, ['--concurrency', '1']);
    assert.equal((await httpRequest(`http://127.0.0.1:${proxy.ports.get('tcp-in')}/ready`)).body, 'LIVE\n');
    const viaConnect = await new Promise<string>((resolve, reject) => {
      const req = httpRequestRaw({ host: '127.0.0.1', port: tunnelEnd, method: 'CONNECT', path: 'admin.internal:80' });
      req.once('connect', (res, socket) => {
        assert.equal(res.statusCode, 200);
        let text = '';
        socket.on('data', (d: Buffer) => (text += d));
        socket.once('end', () => resolve(text));
        socket.write('GET /ready HTTP/1.1\r\nhost: admin.internal\r\nconnection: close\r\n\r\n');
      });
      req.once('error', reject);
      req.end();
    });
    assert.match(viaConnect, /^HTTP\/1\.1 200 OK\r\n[\s\S]*\r\n\r\n[\s\S]*LIVE\n/);
    assert.equal(await statValue(proxy, 'cluster.tunnel.upstream_rq_total'), 1);
    assert.equal(await statValue(proxy, 'http.tunnel-end.downstream_cx_upgrades_total'), 2);
    await waitFor('the access log lines', () => (/CONNECT admin\.internal:9920 from=127\.0\.0\.1:\d+ 200/.test(proxy.output()) && /CONNECT admin\.internal:80 from=- 200/.test(proxy.output()) ? true : undefined));
  });
});

// examples/tracing.yaml with the collector its comments start (scripts/zipkin-collector.ts), on ports known beforehand.
describe('the tracing example', () => {
  it('reports the three spans of one trace to the collector, joined up, as its comments say', async () => {
    const { startZipkinCollector } = await import('../scripts/zipkin-collector.js');
    const collector = await startZipkinCollector();
    try {
      const doc = onPortZero('tracing.yaml');
      const endpoint = (name: string) => doc.static_resources.clusters.find((c: any) => c.name === name).load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address;
      endpoint('zipkin').port_value = collector.port;
      const shop = await closedPort();
      doc.static_resources.listeners.find((l: any) => l.name === 'shop').address.socket_address.port_value = shop;
      endpoint('shop').port_value = shop;
      const proxy = await startProxy(doc, ['--concurrency', '1']);
      assert.equal((await httpRequest(`http://127.0.0.1:${proxy.ports.get('front')}/checkout`)).body, 'paid\n');
      await waitFor('three spans', () => (collector.spans.length >= 3 ? true : undefined));
      const root = collector.spans.find((s) => s.name === 'checkout')!;
      const child = collector.spans.find((s) => s.name === 'router shop egress')!;
      const hop = collector.spans.find((s) => s.kind === 'SERVER' && s.id === child?.id)!;
      assert.ok(root && child && hop, JSON.stringify(collector.spans));
      assert.equal(child.parentId, root.id);
      assert.equal(hop.shared, true);
      assert.equal(root.tags?.['shop.tier'], 'gold');
      assert.equal(root.localEndpoint?.serviceName, 'shop-proxy');
      assert.equal(await statValue(proxy, 'http.front.tracing.random_sampling'), 1);
    } finally {
      await collector.close();
    }
  });
});
