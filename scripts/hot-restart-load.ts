// Hot restarts under load: epoch 0 serves, client loops run (HTTP/1.1 keep-alive, HTTP/1.1 with a
// new connection per request, and h2c), and RESTARTS new epochs follow one another every
// INTERVAL_MS with short drain and parent-shutdown times. Prints the requests, the failures (with
// their reasons) and each epoch's hand-over time: from its start to its first request served.
// Usage: node --import tsx scripts/hot-restart-load.ts   (env: RESTARTS=10 INTERVAL_MS=1500 LOOPS=4;
// REUSE_PORT=1 gives the listener a socket per worker, with 2, 1, 3, 2, 1, 3… workers from epoch to epoch)
// TIMELINE=1 also prints when each step of a new epoch happened (see scripts/bench/startup.ts).
// Prints figures; asserts nothing (test/hot-restart-load.test.ts asserts 0 failures).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { connect as h2connect } from 'node:http2';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { proxyCommand } from './bench/harness.js';
import { type Mark, printSteps, Timeline } from './bench/timeline.js';

const RESTARTS = Number(process.env.RESTARTS ?? 10);
const INTERVAL_MS = Number(process.env.INTERVAL_MS ?? 1500);
const LOOPS = Number(process.env.LOOPS ?? 4);
const root = join(import.meta.dirname, '..');
let dir = '';
let timeline: Timeline | undefined;

/** The listener's kind of socket, and how many workers each epoch runs. */
export interface LoadShape {
  reusePort?: boolean;
  concurrency?: (epoch: number) => number;
}

export interface LoadResult {
  requests: number;
  failures: Map<string, number>;
  handOverMs: number[];
  /** With TIMELINE=1: each new epoch's steps (ms from its spawn). */
  steps: Record<string, Mark>[];
}

/** Each epoch answers `ok <epoch>`, so the clients see which epoch served them. */
function bootstrap(port: number, epoch: number, reusePort: boolean): object {
  return {
    admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
    static_resources: {
      listeners: [{
        name: 'ingress',
        address: { socket_address: { address: '127.0.0.1', port_value: port } },
        ...(reusePort ? { enable_reuse_port: true } : {}),
        filter_chains: [{ filters: [{ name: 'envoy.filters.network.http_connection_manager', typed_config: {
          '@type': 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
          stat_prefix: 'ingress',
          route_config: { virtual_hosts: [{ name: 'all', domains: ['*'], routes: [{ match: { prefix: '/' }, direct_response: { status: 200, body: { inline_string: `ok ${epoch}` } } }] }] },
          http_filters: [{ name: 'envoy.filters.http.router', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router' } }],
        } }] }],
      }],
    },
  };
}

function startEpoch(epoch: number, config: string, concurrency: number): { child: ChildProcess; startedAt: number; adminFile: string } {
  const adminFile = join(dir, `admin-${epoch}`);
  // Epoch 0 takes a free base id and writes it down; the later ones read it (runs side by side never meet).
  const baseIdPath = join(dir, 'base-id');
  const identity = epoch === 0 ? ['--use-dynamic-base-id', '--base-id-path', baseIdPath] : ['--base-id', readFileSync(baseIdPath, 'utf8')];
  // The `proxy` command as installed (bin/proxy: it starts bin/proxy.js without NODE_EXTRA_CA_CERTS).
  const proxy = proxyCommand(root);
  const env = timeline ? timeline.env(proxy.env) : proxy.env;
  const child = spawn(proxy.command, [...proxy.args, '-c', config, ...identity, '--restart-epoch', String(epoch),
    '--concurrency', String(concurrency), '--drain-time-s', '1', '--parent-shutdown-time-s', '2', '--admin-address-path', adminFile, '-l', 'warning'], { stdio: ['ignore', 'inherit', 'inherit'], env });
  return { child, startedAt: Date.now(), adminFile };
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

export async function runLoad(restarts = RESTARTS, intervalMs = INTERVAL_MS, loopCount = LOOPS, shape: LoadShape = {}): Promise<LoadResult> {
  const reusePort = shape.reusePort ?? false;
  const concurrency = shape.concurrency ?? (() => 1);
  dir = mkdtempSync(join(tmpdir(), 'hot-restart-load-'));
  timeline = process.env.TIMELINE === '1' ? new Timeline(dir) : undefined;
  const result: LoadResult = { requests: 0, failures: new Map(), handOverMs: [], steps: [] };
  const fail = (why: string) => result.failures.set(why, (result.failures.get(why) ?? 0) + 1);
  const configOf = (epoch: number) => join(dir, `bootstrap-${epoch}.json`);
  writeFileSync(configOf(0), JSON.stringify(bootstrap(0, 0, reusePort)));
  const epochs = [startEpoch(0, configOf(0), concurrency(0))];
  /** When a client first got an answer from each epoch. */
  const firstServed = new Map<number, number>();
  const served = (body: string) => {
    const epoch = Number(/^ok (\d+)$/.exec(body)?.[1]);
    if (!firstServed.has(epoch)) firstServed.set(epoch, Date.now());
  };
  const admin = await waitFile(epochs[0]!.adminFile);
  const port = Number(/:(\d+)\n/.exec(await new Promise<string>((resolve) => request(`http://${admin}/listeners`, (res) => {
    let t = '';
    res.on('data', (d) => (t += d)).on('end', () => resolve(t));
  }).end()))![1]);
  // Later epochs ask for the same address (port 0 would also work, by listener name).
  for (let epoch = 1; epoch <= restarts; epoch++) writeFileSync(configOf(epoch), JSON.stringify(bootstrap(port, epoch, reusePort)));

  let running = true;
  const get = (agent: Agent | false) => new Promise<void>((resolve) => {
    request({ host: '127.0.0.1', port, path: '/', agent }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => {
        served(body);
        if (res.statusCode === 200) result.requests++;
        else fail(`HTTP ${res.statusCode}`);
        resolve();
      });
      res.on('error', (err) => (fail(`h1 response: ${err.message}`), resolve()));
    }).on('error', (err: NodeJS.ErrnoException) => (fail(`h1 ${agent ? 'keep-alive' : 'new connection'}: ${err.code ?? err.message}`), resolve())).end();
  });
  const loops: Promise<void>[] = [];
  for (let i = 0; i < loopCount; i++) {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    loops.push((async () => { while (running) await get(agent); agent.destroy(); })());
    loops.push((async () => { while (running) await get(false); })());
  }
  loops.push((async () => {
    let session = h2connect(`http://127.0.0.1:${port}`);
    session.on('error', () => {});
    while (running) {
      if (session.closed || session.destroyed) {
        session = h2connect(`http://127.0.0.1:${port}`);
        session.on('error', () => {});
      }
      await new Promise<void>((resolve) => {
        const s = session.request({ ':path': '/' });
        let status = 0;
        s.on('response', (h) => (status = Number(h[':status'])));
        let body = '';
        s.setEncoding('utf8');
        s.on('data', (d: string) => (body += d));
        s.on('end', () => {
          served(body);
          if (status === 200) result.requests++;
          else fail(`h2 status ${status}`);
          resolve();
        });
        s.on('error', (err: NodeJS.ErrnoException) => {
          // A GOAWAY'd session refuses new streams before any byte was exchanged: the client opens a new session.
          if (err.code === 'ERR_HTTP2_GOAWAY_SESSION' || err.code === 'ERR_HTTP2_STREAM_CANCEL') session.destroy();
          else fail(`h2: ${err.code ?? err.message}`);
          resolve();
        });
        s.end();
      });
    }
    session.close();
  })());

  /** Epochs whose steps are read at the end, once each is LIVE (the admin process can be ready after the first request served). */
  const pendingSteps: [ReturnType<typeof startEpoch>, number][] = [];
  for (let epoch = 1; epoch <= restarts; epoch++) {
    await new Promise((r) => setTimeout(r, intervalMs));
    const e = startEpoch(epoch, configOf(epoch), concurrency(epoch));
    epochs.push(e);
    // Hand-over time: this epoch's start to the first answer a client got from it.
    while (!firstServed.has(epoch) && Date.now() - e.startedAt < 20_000) await new Promise((r) => setTimeout(r, 2));
    result.handOverMs.push((firstServed.get(epoch) ?? NaN) - e.startedAt);
    if (timeline) pendingSteps.push([e, firstServed.get(epoch) ?? NaN]);
  }
  await new Promise((r) => setTimeout(r, intervalMs));
  running = false;
  await Promise.all(loops);
  for (const e of epochs) if (e.child.exitCode === null) e.child.kill('SIGTERM');
  await Promise.all(epochs.map((e) => (e.child.exitCode !== null ? undefined : new Promise((r) => e.child.once('exit', r)))));
  for (const [e, servedAt] of pendingSteps) result.steps.push(timeline!.epochSteps(e.child.pid!, e.startedAt, servedAt));
  rmSync(dir, { recursive: true, force: true });
  return result;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const reuse = process.env.REUSE_PORT === '1';
  const r = await runLoad(RESTARTS, INTERVAL_MS, LOOPS, reuse ? { reusePort: true, concurrency: (epoch) => [2, 1, 3][epoch % 3]! } : {});
  const failed = [...r.failures.values()].reduce((a, b) => a + b, 0);
  const sorted = [...r.handOverMs].sort((a, b) => a - b);
  console.log(`hot restart under load${reuse ? ' (enable_reuse_port, 2/1/3 workers)' : ''}: ${RESTARTS} restarts every ${INTERVAL_MS} ms, ${LOOPS} keep-alive + ${LOOPS} new-connection HTTP/1.1 loops and 1 h2c loop`);
  console.log(`  requests ok: ${r.requests}, failed: ${failed}${failed ? ` (${[...r.failures].map(([k, v]) => `${k}: ${v}`).join(', ')})` : ''}`);
  console.log(`  hand-over (epoch start to its first request served): median ${sorted[Math.floor(sorted.length / 2)]} ms, max ${sorted[sorted.length - 1]} ms, all ${r.handOverMs.join(', ')}`);
  if (r.steps.length > 0) {
    console.log(`  each step of a new epoch (median ms from its spawn, over ${r.steps.length}):`);
    printSteps(r.steps);
  }
}
