// Hot restarts under WebSocket load: epoch 0 serves a WebSocket echo (a `ws` server behind the
// proxy); HOLD WebSockets are opened and exchange messages without pause, and a loop opens a new
// WebSocket, round-trips one message and closes it, again and again. RESTARTS new epochs follow one
// another every INTERVAL_MS (drain time 2 s, parent shutdown 4 s). Each epoch tags its 101 with
// `x-epoch`, so clients see which one upgraded them.
// Usage: node --import tsx scripts/hot-restart-websocket.ts   (env: RESTARTS=3 INTERVAL_MS=3000 HOLD=8)
// Prints figures; asserts nothing (test/hot-restart-websocket.test.ts asserts them).
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket, { WebSocketServer } from 'ws';

const root = join(import.meta.dirname, '..');

export interface WebSocketRestartResult {
  /** Handshakes attempted and failed (by reason). */
  handshakes: number;
  failures: Map<string, number>;
  /** Messages echoed, on held and on short-lived WebSockets. */
  echoes: number;
  /** Held WebSockets: how many, how many were echoed to after their epoch began to drain, and how each ended. */
  held: number;
  /** Held WebSockets upgraded by an epoch that a later one replaced (each must be echoed to while it drained). */
  heldOnReplaced: number;
  echoedWhileDraining: number;
  closedWithError: number;
  /** Which epoch upgraded each short-lived WebSocket, by epoch. */
  upgradedBy: Map<number, number>;
}

function bootstrap(port: number, epoch: number, echoPort: number): object {
  return {
    admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
    static_resources: {
      listeners: [{
        name: 'ws',
        address: { socket_address: { address: '127.0.0.1', port_value: port } },
        filter_chains: [{ filters: [{ name: 'envoy.filters.network.http_connection_manager', typed_config: {
          '@type': 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
          stat_prefix: 'ws',
          upgrade_configs: [{ upgrade_type: 'websocket' }],
          route_config: { virtual_hosts: [{ name: 'all', domains: ['*'], routes: [{ match: { prefix: '/' }, route: { cluster: 'echo' } }], response_headers_to_add: [{ header: { key: 'x-epoch', value: String(epoch) } }] }] },
          http_filters: [{ name: 'envoy.filters.http.router', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router' } }],
        } }] }],
      }],
      clusters: [{ name: 'echo', type: 'STATIC', connect_timeout: '1s', load_assignment: { cluster_name: 'echo', endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: echoPort } } } }] }] } }],
    },
  };
}

async function waitFile(path: string): Promise<string> {
  for (;;) {
    if (existsSync(path)) {
      const v = readFileSync(path, 'utf8');
      if (v) return v;
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Opens a WebSocket; resolves with it and the epoch that upgraded it. */
function openWs(port: number, path: string): Promise<{ ws: WebSocket; epoch: number }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}${path}`);
    let epoch = NaN;
    ws.once('upgrade', (res) => (epoch = Number(res.headers['x-epoch'])));
    ws.once('open', () => resolve({ ws, epoch }));
    ws.once('unexpected-response', (_req, res) => reject(new Error(`handshake answered ${res.statusCode}`)));
    ws.once('error', reject);
  });
}

export async function runWebSocketRestarts(restarts = 3, intervalMs = 3000, hold = 8): Promise<WebSocketRestartResult> {
  const dir = mkdtempSync(join(tmpdir(), 'hot-restart-ws-'));
  const echo = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  echo.on('connection', (s) => s.on('message', (d, binary) => s.send(d, { binary })));
  await once(echo, 'listening');
  const echoPort = (echo.address() as AddressInfo).port;
  const result: WebSocketRestartResult = { handshakes: 0, failures: new Map(), echoes: 0, held: 0, heldOnReplaced: 0, echoedWhileDraining: 0, closedWithError: 0, upgradedBy: new Map() };
  const fail = (why: string) => result.failures.set(why, (result.failures.get(why) ?? 0) + 1);
  const children: ChildProcess[] = [];
  const start = (epoch: number, port: number): string => {
    const config = join(dir, `bootstrap-${epoch}.json`);
    writeFileSync(config, JSON.stringify(bootstrap(port, epoch, echoPort)));
    const baseIdPath = join(dir, 'base-id');
    const identity = epoch === 0 ? ['--use-dynamic-base-id', '--base-id-path', baseIdPath] : ['--base-id', readFileSync(baseIdPath, 'utf8')];
    const adminFile = join(dir, `admin-${epoch}`);
    children.push(spawn(process.execPath, [join(root, 'bin/proxy.js'), '-c', config, ...identity, '--restart-epoch', String(epoch), '--concurrency', '1',
      '--drain-time-s', '2', '--parent-shutdown-time-s', '4', '--admin-address-path', adminFile, '-l', 'warning'], { stdio: ['ignore', 'inherit', 'inherit'] }));
    return adminFile;
  };
  const admin = await waitFile(start(0, 0));
  const port = Number(/:(\d+)\n/.exec(await new Promise<string>((resolve) => request(`http://${admin}/listeners`, (res) => {
    let t = '';
    res.on('data', (d) => (t += d)).on('end', () => resolve(t));
  }).end()))![1]);

  /** The epoch whose drain began last (held WebSockets of older epochs are draining). */
  let currentEpoch = 0;
  let running = true;
  const holders: Promise<void>[] = [];
  /** A held WebSocket: messages back to back until its epoch closes it. */
  const holdOne = async () => {
    result.handshakes++;
    let opened: { ws: WebSocket; epoch: number };
    try {
      opened = await openWs(port, '/hold');
    } catch (err) {
      fail(`held handshake: ${(err as Error).message}`);
      return;
    }
    const { ws, epoch } = opened;
    result.held++;
    let echoedWhileDraining = false;
    let errored = false;
    ws.on('error', () => (errored = true));
    ws.on('message', () => {
      result.echoes++;
      if (currentEpoch > epoch && !echoedWhileDraining) {
        echoedWhileDraining = true;
        result.echoedWhileDraining++;
      }
      if (ws.readyState === WebSocket.OPEN && running) ws.send('hold');
    });
    ws.send('hold');
    await once(ws, 'close');
    if (errored) result.closedWithError++;
    if (epoch < restarts) result.heldOnReplaced++;
  };
  for (let i = 0; i < hold; i++) holders.push(holdOne());
  const churn = (async () => {
    while (running) {
      result.handshakes++;
      try {
        const { ws, epoch } = await openWs(port, '/churn');
        result.upgradedBy.set(epoch, (result.upgradedBy.get(epoch) ?? 0) + 1);
        const reply = once(ws, 'message');
        ws.send('churn');
        await reply;
        result.echoes++;
        ws.close();
        await once(ws, 'close');
      } catch (err) {
        fail(`handshake: ${(err as Error).message}`);
      }
    }
  })();

  for (let epoch = 1; epoch <= restarts; epoch++) {
    await new Promise((r) => setTimeout(r, intervalMs));
    await waitFile(start(epoch, port));
    currentEpoch = epoch;
    // New held WebSockets on the new epoch, to be drained by the next one.
    for (let i = 0; i < hold; i++) holders.push(holdOne());
  }
  await new Promise((r) => setTimeout(r, intervalMs));
  running = false;
  await churn;
  for (const c of children) if (c.exitCode === null) c.kill('SIGTERM');
  await Promise.all(holders);
  await Promise.all(children.map((c) => (c.exitCode !== null ? undefined : once(c, 'exit'))));
  echo.close();
  rmSync(dir, { recursive: true, force: true });
  return result;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const restarts = Number(process.env.RESTARTS ?? 3);
  const hold = Number(process.env.HOLD ?? 8);
  const r = await runWebSocketRestarts(restarts, Number(process.env.INTERVAL_MS ?? 3000), hold);
  const failed = [...r.failures.values()].reduce((a, b) => a + b, 0);
  console.log(`hot restart under WebSocket load: ${restarts} restarts, ${hold} held WebSockets per epoch, one churning loop`);
  console.log(`  handshakes: ${r.handshakes}, failed: ${failed}${failed ? ` (${[...r.failures].map(([k, v]) => `${k}: ${v}`).join(', ')})` : ''}; messages echoed: ${r.echoes}`);
  console.log(`  held WebSockets: ${r.held} (${r.heldOnReplaced} on epochs replaced), echoed to while their epoch drained: ${r.echoedWhileDraining}, closed with an error: ${r.closedWithError}`);
  console.log(`  short-lived WebSockets by the epoch that upgraded them: ${[...r.upgradedBy].map(([e, n]) => `${e}: ${n}`).join(', ')}`);
}
