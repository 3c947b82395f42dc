// npm run bench (scaling part): the proxy with --concurrency 2 against 1 on this machine, with
// the listener's one socket shared by the workers (the default) and with enable_reuse_port (a
// socket per worker, the kernel spreading connections by hash), on keep-alive connections and
// with a new connection per request. Nothing is pinned: the workers, wrk (-t2) and the upstream
// share every core, so the figures say how much a second worker buys on this box, not on a big
// one. For each: req/s, the proxy tree's CPU per request, p99, and how the connections were
// spread over the workers (listener.<address>.worker_<i>.downstream_cx_total). Rounds alternate
// between the layouts (ROUNDS, default 3; medians). Prints figures; asserts nothing.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchBootstrap, get, startPrintingPort, stopChildrenOnInterrupt, waitFor } from './harness.js';
import { CLK_TCK, treeCpuTicks } from './process-cpu.js';
import { loadToolSummary, runLoad, type LoadShape } from './wrk.js';

const DURATION_S = Number(process.env.DURATION ?? 8);
const WARMUP_S = Number(process.env.WARMUP ?? 2);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const CONNECTIONS = Number(process.env.CONNECTIONS ?? 100);
const root = join(import.meta.dirname, '../..');
const dir = mkdtempSync(join(tmpdir(), 'bench-scaling-'));
const children: ChildProcess[] = [];
stopChildrenOnInterrupt(children, dir);

interface Layout {
  label: string;
  workers: number;
  reusePort: boolean;
}

const LAYOUTS: Layout[] = [
  { label: '1 worker', workers: 1, reusePort: false },
  { label: '2 workers, shared socket', workers: 2, reusePort: false },
  { label: '2 workers, reuse_port', workers: 2, reusePort: true },
];

interface Running {
  child: ChildProcess;
  url: string;
  admin: string;
}

async function startProxy(upstreamPort: number, layout: Layout, n: number): Promise<Running> {
  const bootstrap = benchBootstrap(upstreamPort);
  if (layout.reusePort) (bootstrap.static_resources.listeners[0] as Record<string, unknown>).enable_reuse_port = true;
  const config = join(dir, `bootstrap-${n}.json`);
  writeFileSync(config, JSON.stringify(bootstrap));
  const adminFile = join(dir, `admin-${n}`);
  const child = spawn(process.execPath, [join(root, 'bin/proxy.js'), '-c', config, '--concurrency', String(layout.workers), '--admin-address-path', adminFile, '--use-dynamic-base-id', '-l', 'warning'], { stdio: ['ignore', 'inherit', 'inherit'] });
  children.push(child);
  const admin = await waitFor(() => (existsSync(adminFile) ? readFileSync(adminFile, 'utf8') || undefined : undefined));
  await waitFor(async () => ((await get(`http://${admin}/ready`)) === 'LIVE\n' ? true : undefined));
  const port = Number(/:(\d+)\n/.exec(await get(`http://${admin}/listeners`))![1]);
  return { child, url: `http://127.0.0.1:${port}/`, admin };
}

/** Each worker's accepted connections so far. */
async function perWorker(admin: string, workers: number): Promise<number[]> {
  const text = await get(`http://${admin}/stats?filter=worker_%5Cd%2B%5C.downstream_cx_total`);
  const counts = new Array<number>(workers).fill(0);
  for (const m of text.matchAll(/^listener\.[^ ]*\.worker_(\d+)\.downstream_cx_total: (\d+)$/gm)) counts[Number(m[1])]! += Number(m[2]);
  return counts;
}

interface Figures {
  rps: number;
  cpuUs: number;
  p99: number;
  errors: number;
  spread: number[];
}

async function measure(running: Running, layout: Layout, shape: LoadShape): Promise<Figures> {
  runLoad(running.url, WARMUP_S, shape);
  const before = await perWorker(running.admin, layout.workers);
  const cpuBefore = treeCpuTicks(running.child.pid!);
  const r = runLoad(running.url, DURATION_S, shape);
  const cpuUs = ((treeCpuTicks(running.child.pid!) - cpuBefore) * (1e6 / CLK_TCK)) / Math.max(1, r.requests);
  const after = await perWorker(running.admin, layout.workers);
  return { rps: r.rps, cpuUs, p99: r.p99, errors: r.errors, spread: after.map((v, i) => v - before[i]!) };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

try {
  const upstream = await startPrintingPort(children, -1, [join(root, 'scripts/bench/upstream.mjs')]);
  const proxies = await Promise.all(LAYOUTS.map((layout, i) => startProxy(upstream.port, layout, i)));
  for (const [close, what] of [[false, 'keep-alive'], [true, 'a new connection per request']] as const) {
    const shape: LoadShape = { connections: CONNECTIONS, threads: 2, close };
    console.log(`\nscaling, ${what}: ${loadToolSummary(shape)}${close ? ' (Connection: close)' : ''}, ${DURATION_S} s after ${WARMUP_S} s warm-up, ${availableParallelism()} cores, nothing pinned, medians of ${ROUNDS} rounds`);
    const results = LAYOUTS.map(() => [] as Figures[]);
    for (let round = 0; round < ROUNDS; round++) {
      for (let i = 0; i < LAYOUTS.length; i++) results[i]!.push(await measure(proxies[i]!, LAYOUTS[i]!, shape));
    }
    const baseRps = median(results[0]!.map((f) => f.rps));
    LAYOUTS.forEach((layout, i) => {
      const f = results[i]!;
      const rps = median(f.map((x) => x.rps));
      const spread = f[f.length - 1]!.spread;
      const total = spread.reduce((a, b) => a + b, 0);
      const shares = layout.workers > 1 && total ? `   connections per worker ${spread.map((v) => `${((v / total) * 100).toFixed(0)}%`).join(' / ')} (${total})` : '';
      console.log(`  ${layout.label.padEnd(26)} ${rps.toFixed(0).padStart(7)} req/s (${(rps / baseRps).toFixed(2)}×)   ${median(f.map((x) => x.cpuUs)).toFixed(1).padStart(6)} µs CPU/req   p99 ${median(f.map((x) => x.p99)).toFixed(2).padStart(6)} ms   ${f.reduce((s, x) => s + x.errors, 0)} errors${shares}`);
    });
  }
} finally {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
}
