// What the bench scripts share: the bench bootstrap (one listener, one route, one static cluster,
// as issue 18's table was measured), the `proxy` command, starting helper processes, and polling
// for readiness.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { dirname, join } from 'node:path';
import { pinned } from './pinning.js';

/**
 * The `proxy` command of a checkout, as installed (bin/proxy, which starts bin/proxy.js without
 * NODE_EXTRA_CA_CERTS), and the environment to run it in (this Node first on its PATH); in a
 * checkout from before bin/proxy, bin/proxy.js run by this Node.
 */
export function proxyCommand(tree: string): { command: string; args: string[]; env: NodeJS.ProcessEnv } {
  const command = join(tree, 'bin/proxy');
  const env = { ...process.env, PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}` };
  return existsSync(command) ? { command, args: [], env } : { command: process.execPath, args: [join(tree, 'bin/proxy.js')], env };
}

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

/**
 * A GET on a connection of its own: a kept-alive one can sit idle through a load run (spawnSync
 * blocks this process meanwhile), be closed by the server, and fail as `socket hang up`.
 */
export function get(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    request(url, { agent: false }, (res) => {
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

/**
 * Stops `children` and removes `tempDir` if the bench is interrupted (Ctrl-C, a terminal closing,
 * `kill`) or its output goes away (piped into `head`): its `finally` would not run then, and the
 * proxies, nginx, HAProxy and the upstream would be left running.
 */
export function stopChildrenOnInterrupt(children: ChildProcess[], tempDir: string): void {
  const stop = (code: number) => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGTERM');
    rmSync(tempDir, { recursive: true, force: true });
    process.exit(code);
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.once(signal, () => stop(130));
  process.stdout.on('error', () => stop(141));
}
