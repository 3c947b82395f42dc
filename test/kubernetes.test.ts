import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { after, describe, it } from 'node:test';
import { loadAll } from 'js-yaml';
import { runProxy, tempDir } from './helpers/cli.js';
import { TestControlPlane } from './helpers/control-plane.js';
import { httpRequest, startProxy, stopAllProxies, waitFor } from './helpers/proxy.js';

/**
 * examples/kubernetes/ as docs/kubernetes.md describes it: the manifests parse, the bootstrap in
 * the ConfigMap validates, the probes reach listeners of it (the admin stays on loopback), the
 * grace period covers the preStop's waits; and the preStop sequence, run against a proxy under
 * load with the control plane's resources, loses no request: readiness fails, the "Service" (the
 * load, here) stops sending, the connections left drain, the kubelet's SIGTERM ends it cleanly.
 */

const tmp = tempDir();
after(async () => {
  await stopAllProxies();
  tmp.cleanup();
});

type Doc = Record<string, any>;
const manifests = (file: string) => loadAll(readFileSync(`examples/kubernetes/${file}`, 'utf8')).filter(Boolean) as Doc[];
const proxyDocs = manifests('proxy.yaml');
const cpDocs = manifests('control-plane.yaml');
const find = (docs: Doc[], kind: string, name: string) => {
  const d = docs.find((x) => x.kind === kind && x.metadata?.name === name);
  assert.ok(d, `${kind} ${name}`);
  return d;
};
const deployment = find(proxyDocs, 'Deployment', 'proxy');
const container = deployment.spec.template.spec.containers[0];
const env = Object.fromEntries((container.env as { name: string; value?: string }[]).filter((e) => e.value !== undefined).map((e) => [e.name, e.value!]));
const bootstrapText = find(proxyDocs, 'ConfigMap', 'proxy-bootstrap').data['proxy.yaml'] as string;
const bootstrap = () => (loadAll(bootstrapText)[0] as Doc);

describe('examples/kubernetes', () => {
  it('parses: the proxy (ConfigMap, Deployment, Service) and its control plane (ConfigMap, Deployment, Service)', () => {
    assert.deepEqual(proxyDocs.map((d) => d.kind), ['ConfigMap', 'Deployment', 'Service']);
    assert.deepEqual(cpDocs.map((d) => d.kind), ['ConfigMap', 'Deployment', 'Service']);
    const xds = bootstrap().static_resources.clusters.find((c: Doc) => c.name === 'xds');
    const cpService = find(cpDocs, 'Service', 'proxy-control-plane');
    assert.deepEqual(xds.load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address, { address: cpService.metadata.name, port_value: cpService.spec.ports[0].port });
  });

  it('its bootstrap validates, with the admin on loopback and the probes on a listener', async () => {
    const path = tmp.file('k8s-bootstrap.yaml', bootstrapText);
    const out = await runProxy(['--mode', 'validate', '-c', path, '--service-node', 'proxy-0']);
    assert.equal(out.code, 0, out.stderr);
    const b = bootstrap();
    assert.equal(b.admin.address.socket_address.address, '127.0.0.1');
    const ports = Object.fromEntries((container.ports as { name: string; containerPort: number }[]).map((p) => [p.name, p.containerPort]));
    const probes = b.static_resources.listeners.find((l: Doc) => l.name === 'probes');
    assert.equal(probes.address.socket_address.port_value, ports.probes);
    assert.equal(container.readinessProbe.httpGet.port, 'probes');
    assert.equal(container.livenessProbe.httpGet.port, 'probes');
    const hcm = probes.filter_chains[0].filters[0].typed_config;
    assert.equal(hcm.http_filters[0].typed_config.headers[0].string_match.exact, container.readinessProbe.httpGet.path);
    assert.equal(hcm.route_config.virtual_hosts[0].routes[0].match.path, container.livenessProbe.httpGet.path);
    // The grace period covers both waits of the preStop, and the shutdown after them.
    assert.ok(deployment.spec.template.spec.terminationGracePeriodSeconds >= Number(env.READINESS_DRAIN_S) + Number(env.DRAIN_TIME_S) + 10);
  });

  it('the preStop sequence under load: readiness fails, the load moves off, the rest drains, SIGTERM; no request lost', async () => {
    const resources = loadAll(find(cpDocs, 'ConfigMap', 'proxy-resources').data['resources.yaml'])[0] as Record<string, Doc[]>;
    for (const l of resources.listeners!) l.address.socket_address = { address: '127.0.0.1', port_value: 0 };
    const cp = await TestControlPlane.start();
    try {
      cp.setAll(resources as never, 'v1');
      const b = bootstrap();
      b.admin.address.socket_address.port_value = 0;
      const probes = b.static_resources.listeners.find((l: Doc) => l.name === 'probes');
      probes.address.socket_address = { address: '127.0.0.1', port_value: 0 };
      const xds = b.static_resources.clusters.find((c: Doc) => c.name === 'xds');
      xds.type = 'STATIC';
      xds.load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address = { address: '127.0.0.1', port_value: cp.port };
      // The container's arguments, as Kubernetes expands them, with a short drain for the test.
      const vars: Record<string, string> = { POD_NAME: 'proxy-0', DRAIN_TIME_S: '1' };
      const args = (container.args as string[]).slice(2).map((a) => a.replace(/\$\((\w+)\)/g, (_, v: string) => vars[v]!));
      const proxy = await startProxy(b, [...args, '--concurrency', '1']);
      const ingress = await waitFor('the listener from the control plane', async () => {
        const json = JSON.parse((await httpRequest(`http://${proxy.admin}/listeners?format=json`)).body) as { listener_statuses: { name: string; local_address: { socket_address: { port_value: number } } }[] };
        return json.listener_statuses.find((l) => l.name === 'ingress')?.local_address.socket_address.port_value;
      });
      const probePort = proxy.ports.get('probes')!;

      // The kubelet: readiness every 100 ms; two failures and the Service sends no new request.
      let inService = true;
      let failures = 0;
      const kubelet = setInterval(() => {
        void httpRequest(`http://127.0.0.1:${probePort}${container.readinessProbe.httpGet.path}`).then((r) => {
          failures = r.status === 200 ? 0 : failures + 1;
          if (failures >= container.readinessProbe.failureThreshold) inService = false;
        }, () => undefined);
      }, 100);
      // The load: 8 clients on kept-alive connections, sending while the pod is in service.
      const agent = new Agent({ keepAlive: true });
      const counts = { ok: 0, failed: 0, afterReadinessFailed: 0 };
      const client = async () => {
        while (inService) {
          const ok = await new Promise<boolean>((resolve) => {
            const rq = request({ host: '127.0.0.1', port: ingress, path: '/', agent }, (res) => {
              res.resume();
              res.on('end', () => resolve(res.statusCode === 200));
              res.on('error', () => resolve(false));
            });
            rq.on('error', () => resolve(false));
            rq.end();
          });
          if (ok) counts.ok++;
          else counts.failed++;
          if (failures > 0) counts.afterReadinessFailed++;
        }
      };
      const load = Promise.all(Array.from({ length: 8 }, client));
      await waitFor('some traffic', () => (counts.ok >= 50 ? true : undefined));

      // The preStop hook, as the manifest writes it (the admin's address, and shorter waits, are the test's).
      const hook = (container.lifecycle.preStop.exec.command as string[]).map((a) => a.replaceAll('127.0.0.1:9901', proxy.admin));
      const preStop = spawn(hook[0]!, hook.slice(1), { env: { ...process.env, READINESS_DRAIN_S: '1', DRAIN_TIME_S: vars.DRAIN_TIME_S }, stdio: ['ignore', 'pipe', 'pipe'] });
      let hookOutput = '';
      preStop.stdout!.on('data', (d) => (hookOutput += d));
      preStop.stderr!.on('data', (d) => (hookOutput += d));
      assert.equal(await new Promise((resolve) => preStop.once('exit', resolve)), 0, hookOutput);
      assert.equal(inService, false, 'readiness failed during the preStop');
      await load;
      clearInterval(kubelet);
      agent.destroy();
      // Then the kubelet's SIGTERM: a clean exit.
      assert.equal(await proxy.stop('SIGTERM'), 0);
      assert.equal(counts.failed, 0, `${counts.failed} of ${counts.ok + counts.failed} requests failed`);
      assert.ok(counts.ok >= 50);
    } finally {
      cp.stop();
    }
  });
});
