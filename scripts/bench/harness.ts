// What the bench scripts share: the bench bootstrap (one listener, one route, one static cluster,
// as issue 18's table was measured), starting helper processes, and polling for readiness.
import { spawn, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { pinned } from './pinning.js';

/** The bench bootstrap: a listener on port 0 routing everything to `upstreamPort`, an admin on port 0. */
export function benchBootstrap(upstreamPort: number) {
  return {
    admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
    static_resources: {
      listeners: [{
        name: 'bench',
        address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
        filter_chains: [{ filters: [{ name: 'envoy.filters.network.http_connection_manager', typed_config: {
          '@type': 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
          stat_prefix: 'bench',
          route_config: { virtual_hosts: [{ name: 'all', domains: ['*'], routes: [{ match: { prefix: '/' }, route: { cluster: 'upstream' } }] }] },
          http_filters: [{ name: 'envoy.filters.http.router', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router' } }],
        } }] }],
      }],
      clusters: [{ name: 'upstream', connect_timeout: '1s', type: 'STATIC', load_assignment: { cluster_name: 'upstream', endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: upstreamPort } } } }] }] } }],
    },
  };
}

/** A Node script that prints its port first, on `core` (see pinning.ts); it joins `children`. */
export function startPrintingPort(children: ChildProcess[], core: number, args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(...pinned(core, process.execPath, args), { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...env } });
  children.push(child);
  return new Promise((resolve) => child.stdout!.once('data', (d) => resolve({ child, port: Number(String(d).trim()) })));
}

export function get(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    request(url, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve(body));
    }).on('error', reject).end();
  });
}

/** Polls `probe` every 50 ms until it gives a value (15 s at most). */
export async function waitFor<T>(probe: () => Promise<T | undefined> | T | undefined): Promise<T> {
  for (let i = 0; i < 300; i++) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch {
      // not yet
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('timed out');
}
