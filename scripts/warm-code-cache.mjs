// Part of the build (scripts/build.mjs), after the bundles and their top-level code caches: runs
// the proxy on a small bootstrap, sends requests through it and asks its admin interface for its
// main pages, then stops it; each of its processes writes its role's code cache again as it exits
// (bin/role-launcher.cjs, PROXY_BUILD_CODE_CACHE_RUN), now with the functions that serving
// compiled. A new worker then serves its first request without compiling the request path (on
// every hot restart and every worker replacement). The tree that writes the caches is a hot
// restart's middle epoch: started as the child of one epoch and then the parent of another, its
// supervisor has compiled both sides of the hand-over (the messages' codec, the configuration
// read for the child, the sockets passed), which every new epoch and its parent otherwise
// compile on the hand-over's path. Anything going wrong here leaves the top-level caches in
// place: the build says so and goes on.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, createServer, get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const REQUESTS = 50;
const DEADLINE_MS = 30_000;
const ADMIN_PAGES = ['/ready', '/stats', '/stats/prometheus', '/stats?format=json', '/clusters', '/listeners', '/server_info', '/config_dump', '/runtime', '/hot_restart_status'];

function fetchText(url, agent) {
  return new Promise((resolve, reject) => {
    get(url, { agent }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode, body }));
    }).on('error', reject);
  });
}

async function until(what, probe) {
  const deadline = Date.now() + DEADLINE_MS;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`no ${what} within ${DEADLINE_MS} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export async function warmCodeCaches() {
  const dir = mkdtempSync(join(tmpdir(), 'proxy-warm-'));
  const upstream = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.end('warm'));
  });
  await new Promise((r) => upstream.listen(0, '127.0.0.1', r));
  const epochs = [];
  try {
    const route = (match, action) => ({ match, ...action });
    const bootstrap = {
      admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
      static_resources: {
        listeners: [{
          name: 'warm',
          address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
          filter_chains: [{ filters: [{
            name: 'envoy.filters.network.http_connection_manager',
            typed_config: {
              '@type': 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
              stat_prefix: 'warm',
              access_log: [{ name: 'envoy.access_loggers.file', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.access_loggers.file.v3.FileAccessLog', path: join(dir, 'access.log') } }],
              route_config: { virtual_hosts: [{ name: 'all', domains: ['*'], routes: [
                route({ prefix: '/direct' }, { direct_response: { status: 200, body: { inline_string: 'warm' } } }),
                route({ prefix: '/' }, { route: { cluster: 'upstream' } }),
              ] }] },
              http_filters: [{ name: 'envoy.filters.http.router', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router' } }],
            },
          }] }],
        }],
        clusters: [{
          name: 'upstream', type: 'STATIC', connect_timeout: '1s',
          load_assignment: { cluster_name: 'upstream', endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: upstream.address().port } } } }] }] },
        }],
      },
    };
    // A .yaml file (JSON is YAML), so that the YAML reader most bootstraps go through is compiled too.
    const config = join(dir, 'bootstrap.yaml');
    writeFileSync(config, JSON.stringify(bootstrap));
    const baseIdPath = join(dir, 'base-id');
    const startEpoch = (epoch, writesCaches) => {
      const identity = epoch === 0 ? ['--use-dynamic-base-id', '--base-id-path', baseIdPath] : ['--base-id', readFileSync(baseIdPath, 'utf8')];
      const adminPath = join(dir, `admin-${epoch}`);
      const child = spawn(process.execPath, [join(root, 'bin/proxy.js'), '-c', config, ...identity, '--restart-epoch', String(epoch), '--concurrency', '1',
        '--drain-time-s', '1', '--parent-shutdown-time-s', '2', '--admin-address-path', adminPath, '-l', 'error'], {
        env: writesCaches ? { ...process.env, PROXY_BUILD_CODE_CACHE_RUN: '1' } : process.env,
        stdio: ['ignore', 'inherit', 'inherit'],
      });
      epochs.push(child);
      const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
      const live = until(`epoch ${epoch}'s admin address`, async () => (existsSync(adminPath) ? readFileSync(adminPath, 'utf8') || undefined : undefined)).then(async (admin) => {
        await until(`epoch ${epoch} LIVE`, async () => ((await fetchText(`http://${admin}/ready`)).body === 'LIVE\n' ? true : undefined));
        return admin;
      });
      return { child, exited, live };
    };
    await startEpoch(0, false).live;
    const middle = startEpoch(1, true);
    const admin = await middle.live;
    const listeners = JSON.parse((await fetchText(`http://${admin}/listeners?format=json`)).body);
    const port = listeners.listener_statuses[0].local_address.socket_address.port_value;
    const agent = new Agent({ keepAlive: true, maxSockets: 4 });
    for (let i = 0; i < REQUESTS; i++) {
      const paths = ['/', '/direct', `/?n=${i}`];
      await Promise.all(paths.map((path) => fetchText(`http://127.0.0.1:${port}${path}`, i % 5 === 0 ? undefined : agent)));
    }
    agent.destroy();
    for (const page of ADMIN_PAGES) await fetchText(`http://${admin}${page}`);
    // The next epoch takes over; the middle one drains, is terminated, and writes the caches as it exits.
    const last = startEpoch(2, false);
    await last.live;
    const code = await middle.exited;
    if (code !== 0) throw new Error(`the proxy exited with ${code}`);
    last.child.kill('SIGTERM');
    await last.exited;
  } finally {
    for (const proxy of epochs) if (proxy.exitCode === null && proxy.signalCode === null) proxy.kill('SIGKILL');
    upstream.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
