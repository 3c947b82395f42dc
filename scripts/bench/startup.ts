// npm run bench (start-up part): how soon the proxy serves, on the bench bootstrap, beside issue
// 18's goal of 150 ms. Three figures, each over ROUNDS (default 10):
//  - cold start: `proxy` spawned (epoch 0) to the first answered request, and to the admin's LIVE;
//  - hot restart at idle: epoch N spawned to the first request answered by epoch N (each epoch adds
//    an `x-epoch` response header, so the client sees which one answered);
//  - worker replacement: a worker SIGKILLed to the first request answered after it (in each cold
//    start's tree once it is live: a worker that dies again soon after is replaced with backoff).
// Each epoch is the `proxy` command as installed (bin/proxy, which drops NODE_EXTRA_CA_CERTS: where
// this machine sets it, the figure it would add to every epoch is printed). A client polls with a
// new connection every POLL_MS (default 2). Nothing is pinned: a starting epoch has every core, as
// in production (PIN=1 puts the proxy on core 0 and the upstream on core 1, as pinning.ts does for
// the throughput bench). TIMELINE=1 also prints, for the hot restarts, when each step of a new
// epoch happened (medians, ms from its spawn, and the CPU time its process had used by then): its
// supervisor's Node start and bundle (compiled, run), its worker's fork, Node start and bundle,
// the configuration sent and taken, the worker's ready, its first connection and upstream
// connection, its admin process's start and ready (the parent stops taking connections once the
// new epoch is LIVE), the first request served (./timeline.ts; Node's own start is the rest).
// Prints figures; asserts nothing.
// scripts/hot-restart-load.ts measures the hand-over under load. PROXY_TREE=<a checkout, built>
// measures that tree's proxy instead (an earlier commit's, say, to compare in one sitting).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchBootstrap, get, proxyCommand, startPrintingPort, stopChildrenOnInterrupt, waitFor } from './harness.js';
import { type Mark, printSteps, Timeline } from './timeline.js';
import { LOAD_CORE, pinned, pinning, pinningSummary, PROXY_CORE } from './pinning.js';

const ROUNDS = Number(process.env.ROUNDS ?? 10);
const POLL_MS = Number(process.env.POLL_MS ?? 2);
const GOAL_MS = 150;
const pinOn = process.env.PIN === '1' && pinning;
const root = join(import.meta.dirname, '../..');
const tree = process.env.PROXY_TREE ?? root;
const dir = mkdtempSync(join(tmpdir(), 'bench-startup-'));
const timeline = process.env.TIMELINE === '1' ? new Timeline(dir) : undefined;
const children: ChildProcess[] = [];
stopChildrenOnInterrupt(children, dir);

/** The bench bootstrap on a fixed port, marking its answers with the epoch. */
function bootstrapFor(upstreamPort: number, port: number, epoch: number): string {
  const b = benchBootstrap(upstreamPort);
  const listener = b.static_resources.listeners[0]!;
  listener.address.socket_address.port_value = port;
  const hcm = listener.filter_chains[0]!.filters[0]!.typed_config as { route_config: { response_headers_to_add?: object[] } };
  hcm.route_config.response_headers_to_add = [{ header: { key: 'x-epoch', value: String(epoch) } }];
  const file = join(dir, `bootstrap-${port}-${epoch}.json`);
  writeFileSync(file, JSON.stringify(b));
  return file;
}

/** One request on a new connection: the epoch that answered, or undefined if none did. */
function probe(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: '/', agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode === 200 ? Number(res.headers['x-epoch']) : undefined));
    });
    req.on('error', () => resolve(undefined));
    req.end();
  });
}

/** Polls until an answer satisfies `done`; the time from `since` to that answer. */
async function pollUntil(port: number, since: number, done: (epoch: number | undefined) => boolean): Promise<number> {
  for (;;) {
    if (done(await probe(port))) return performance.now() - since;
    if (performance.now() - since > 20_000) return NaN;
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });
}

function startEpoch(config: string, epoch: number, baseIdPath: string, adminFile: string): ChildProcess {
  const identity = epoch === 0 ? ['--use-dynamic-base-id', '--base-id-path', baseIdPath] : ['--base-id', readFileSync(baseIdPath, 'utf8')];
  const proxy = proxyCommand(tree);
  const env = timeline ? timeline.env(proxy.env) : proxy.env;
  const child = spawn(...pinned(pinOn ? PROXY_CORE : -1, proxy.command, [...proxy.args, '-c', config, ...identity, '--restart-epoch', String(epoch),
    '--concurrency', '1', '--drain-time-s', '1', '--parent-shutdown-time-s', '2', '--admin-address-path', adminFile, '-l', 'warning']), { stdio: ['ignore', 'inherit', 'inherit'], env });
  children.push(child);
  return child;
}

async function adminLive(adminFile: string, since: number): Promise<number> {
  const admin = await waitFor(() => (existsSync(adminFile) ? readFileSync(adminFile, 'utf8') || undefined : undefined));
  await waitFor(async () => ((await get(`http://${admin}/ready`)) === 'LIVE\n' ? true : undefined));
  return performance.now() - since;
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  child.kill('SIGTERM');
  return new Promise((r) => child.once('exit', () => r()));
}

function workerPid(supervisor: number): number | undefined {
  const ps = spawnSync('ps', ['-o', 'pid=,args=', '--ppid', String(supervisor)], { encoding: 'utf8' }).stdout;
  const line = ps.split('\n').find((l) => /\sworker_0$/.test(l));
  return line ? Number(line.trim().split(/\s+/)[0]) : undefined;
}

const summary = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const f = (v: number | undefined) => (v === undefined || Number.isNaN(v) ? '—' : v.toFixed(0));
  return `median ${f(s[Math.floor(s.length / 2)])} ms, min ${f(s[0])}, max ${f(s[s.length - 1])} (${GOAL_MS} ms goal: ${(s[Math.floor(s.length / 2)]! / GOAL_MS).toFixed(2)}×)`;
};

try {
  const upstream = await startPrintingPort(children, pinOn ? LOAD_CORE : -1, [join(root, 'scripts/bench/upstream.mjs')]);
  console.log(`proxy start-up on the bench bootstrap, node ${process.version}, ${ROUNDS} rounds; ${pinOn ? pinningSummary() : 'not pinned'}${tree === root ? '' : `; the proxy of ${tree}`}`);

  // Cold starts: each on its own port, epoch 0; then its worker is killed.
  const cold: number[] = [];
  const coldAdmin: number[] = [];
  const replaced: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const port = await freePort();
    const adminFile = join(dir, `cold-admin-${i}`);
    const since = performance.now();
    const child = startEpoch(bootstrapFor(upstream.port, port, 0), 0, join(dir, `cold-base-${i}`), adminFile);
    const [served, live] = await Promise.all([pollUntil(port, since, (e) => e === 0), adminLive(adminFile, since)]);
    cold.push(served);
    coldAdmin.push(live);
    const pid = workerPid(child.pid!);
    if (pid === undefined) throw new Error('no worker_0 under the supervisor');
    const killedAt = performance.now();
    process.kill(pid, 'SIGKILL');
    replaced.push(await pollUntil(port, killedAt, (e) => e !== undefined));
    await stop(child);
  }
  console.log(`  cold start, spawn to first request served:     ${summary(cold)}`);
  console.log(`  cold start, spawn to admin /ready LIVE:         ${summary(coldAdmin)}`);
  console.log(`  worker SIGKILLed to first request served:       ${summary(replaced)}`);

  // Hot restarts at idle, one after another on the same port.
  const hotRestarts = async (family: string): Promise<number[]> => {
    const port = await freePort();
    const baseIdPath = join(dir, `${family}-base-id`);
    const adminFile = (epoch: number) => join(dir, `${family}-admin-${epoch}`);
    let current = startEpoch(bootstrapFor(upstream.port, port, 0), 0, baseIdPath, adminFile(0));
    await pollUntil(port, performance.now(), (e) => e === 0);
    await adminLive(adminFile(0), 0);
    const handOver: number[] = [];
    const steps: Record<string, Mark>[] = [];
    for (let epoch = 1; epoch <= ROUNDS; epoch++) {
      const config = bootstrapFor(upstream.port, port, epoch);
      const since = performance.now();
      const spawnedAt = Date.now();
      const next = startEpoch(config, epoch, baseIdPath, adminFile(epoch));
      handOver.push(await pollUntil(port, since, (e) => e === epoch));
      const servedAt = Date.now();
      await adminLive(adminFile(epoch), since);
      // Read once LIVE: the admin process can be ready after the first request served.
      if (timeline) steps.push(timeline.epochSteps(next.pid!, spawnedAt, servedAt));
      // The parent goes at its own shutdown time; waiting for it keeps the rounds alike.
      await new Promise<void>((r) => (current.exitCode !== null ? r() : current.once('exit', () => r())));
      current = next;
    }
    await stop(current);
    if (timeline) {
      console.log(`  hot restart at idle, each step of a new epoch (median ms from its spawn, over ${steps.length}):`);
      printSteps(steps);
    }
    return handOver;
  };
  console.log(`  hot restart at idle, spawn to first served:     ${summary(await hotRestarts('hot'))}`);
  // What this machine's environment would add to every epoch's start, before any of the proxy's
  // code runs, were the supervisor started as `node bin/proxy.js` (bin/proxy drops it; the
  // children are forked without it: supervisor/children.ts).
  if (process.env.NODE_EXTRA_CA_CERTS !== undefined) {
    const without = { ...process.env };
    delete without.NODE_EXTRA_CA_CERTS;
    const boot = (env: NodeJS.ProcessEnv) => {
      const times = Array.from({ length: 5 }, () => Number(spawnSync(process.execPath, ['-p', 'performance.now()'], { env, encoding: 'utf8' }).stdout));
      return times.sort((a, b) => a - b)[2]!;
    };
    console.log(`  NODE_EXTRA_CA_CERTS is set here: a bare Node process reaches its first line in ${boot(process.env).toFixed(0)} ms with it, ${boot(without).toFixed(0)} ms without (medians of 5); the \`proxy\` command drops it, \`node bin/proxy.js\` would pay the difference`);
  }
} finally {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
}
