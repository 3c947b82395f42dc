// npm run bench (WebSocket part): message throughput through the proxy against a direct
// connection to the same echo server (scripts/websocket-echo.ts in its own process), in
// alternating rounds. CONNECTIONS WebSockets each keep one message in flight (send, wait for the
// echo, send again) for DURATION seconds; for 64-byte and 16 KiB messages. Prints messages/s both
// ways, their ratio, and the proxy tree's CPU µs per message (from /proc).
// Usage: node --import tsx scripts/bench/websocket.ts   (env: DURATION=5 ROUNDS=3 CONNECTIONS=16)
// Prints figures; asserts nothing.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { CLK_TCK, treeCpuTicks } from './process-cpu.js';
import { stopChildrenOnInterrupt } from './harness.js';

const DURATION_S = Number(process.env.DURATION ?? 5);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const CONNECTIONS = Number(process.env.CONNECTIONS ?? 16);
const root = join(import.meta.dirname, '../..');
const dir = mkdtempSync(join(tmpdir(), 'bench-ws-'));
const children: ChildProcess[] = [];
stopChildrenOnInterrupt(children, dir);

async function waitFile(path: string): Promise<string> {
  for (let i = 0; i < 600; i++) {
    if (existsSync(path) && readFileSync(path, 'utf8')) return readFileSync(path, 'utf8');
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${path} never appeared`);
}

/** Messages echoed in `seconds` by CONNECTIONS ping-pong WebSockets to `url`. */
async function load(url: string, size: number, seconds: number): Promise<number> {
  const payload = Buffer.alloc(size, 0x61);
  const sockets = await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      const ws = new WebSocket(url);
      await once(ws, 'open');
      return ws;
    }),
  );
  let echoes = 0;
  let running = true;
  for (const ws of sockets) {
    ws.on('message', () => {
      echoes++;
      if (running) ws.send(payload);
    });
    ws.send(payload);
  }
  await new Promise((r) => setTimeout(r, seconds * 1000));
  running = false;
  await Promise.all(sockets.map((ws) => (ws.close(), once(ws, 'close'))));
  return echoes;
}

async function main(): Promise<void> {
  const echo = spawn(process.execPath, ['--import', 'tsx', join(root, 'scripts/websocket-echo.ts'), 'serve', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(echo);
  const echoPort = Number(/:(\d+)/.exec(String((await once(echo.stdout!, 'data'))[0]))![1]);
  const bootstrap = {
    admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
    static_resources: {
      listeners: [{
        name: 'ws',
        address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
        filter_chains: [{ filters: [{ name: 'envoy.filters.network.http_connection_manager', typed_config: {
          '@type': 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
          stat_prefix: 'ws',
          upgrade_configs: [{ upgrade_type: 'websocket' }],
          route_config: { virtual_hosts: [{ name: 'all', domains: ['*'], routes: [{ match: { prefix: '/' }, route: { cluster: 'echo' } }] }] },
          http_filters: [{ name: 'envoy.filters.http.router', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router' } }],
        } }] }],
      }],
      clusters: [{ name: 'echo', type: 'STATIC', connect_timeout: '1s', load_assignment: { cluster_name: 'echo', endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: echoPort } } } }] }] } }],
    },
  };
  const config = join(dir, 'bootstrap.json');
  writeFileSync(config, JSON.stringify(bootstrap));
  const adminFile = join(dir, 'admin');
  const proxy = spawn(process.execPath, [join(root, 'bin/proxy.js'), '-c', config, '--concurrency', '1', '--disable-hot-restart', '--admin-address-path', adminFile, '-l', 'warning'], { stdio: 'inherit' });
  children.push(proxy);
  const admin = await waitFile(adminFile);
  const listeners = await (await fetch(`http://${admin}/listeners`)).text();
  const proxyPort = Number(/:(\d+)\n/.exec(listeners)![1]);
  console.log(`WebSocket messages through the proxy (1 worker) against direct, ${CONNECTIONS} WebSockets with one message in flight each, ${DURATION_S} s x ${ROUNDS} rounds (medians)`);
  console.log('| message | direct msg/s | proxy msg/s | proxy / direct | proxy CPU µs/msg |');
  console.log('|---|---|---|---|---|');
  for (const size of [64, 16 * 1024]) {
    await load(`ws://127.0.0.1:${proxyPort}/`, size, 1); // warm-up
    const direct: number[] = [];
    const viaProxy: number[] = [];
    const cpu: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      direct.push((await load(`ws://127.0.0.1:${echoPort}/`, size, DURATION_S)) / DURATION_S);
      const before = treeCpuTicks(proxy.pid!);
      const n = await load(`ws://127.0.0.1:${proxyPort}/`, size, DURATION_S);
      cpu.push((((treeCpuTicks(proxy.pid!) - before) / CLK_TCK) * 1e6) / n);
      viaProxy.push(n / DURATION_S);
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const d = median(direct);
    const p = median(viaProxy);
    console.log(`| ${size >= 1024 ? `${size / 1024} KiB` : `${size} B`} | ${Math.round(d)} | ${Math.round(p)} | ${(p / d).toFixed(2)} | ${median(cpu).toFixed(1)} |`);
  }
}

try {
  await main();
} finally {
  for (const c of children) c.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
}
