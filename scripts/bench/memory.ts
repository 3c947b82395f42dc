// npm run bench (memory part): the resident memory of each process of the proxy's tree
// (supervisor, admin, worker) on the bench bootstrap, at idle once it is live (after IDLE seconds,
// default 5, then again once settled, after SETTLE seconds, default 20: V8 gives start-up's heap
// pages back when a process has been quiet for a while, and shared/idle-housekeeping.ts the C heap's),
// again after LONG seconds (default 150: work an idle tree repeats is optimised by V8 sooner or
// later, which brings V8's optimising compiler into the process for good, its code's pages and
// its threads' heaps, 4-6 MB; the watchdogs' ten ticks a second did it within a minute or two
// until they ran in C, and a process idle for a minute now turns the compiler off; LONG=0 skips
// it), and the worker's peak under
// LOAD_CONNECTIONS (default 1,000) keep-alive connections from wrk for LOAD seconds (default 30:
// the worker's old generation fills with what the young one promotes until V8 collects it, and
// wrk's connections all take a while to open, so a short burst reads low: without the bound on
// the old generation's growth (bin/role-launcher.cjs, ROLE_RUNTIME_V8_FLAGS), 80-95 MB after
// 10 s and 110 MB after 30 s, measured on the same build; with it, 94-96 MB from 30 s to 120 s),
// beside issue 18's goals. The proxy is the `proxy` command as installed (bin/proxy). Beside each
// figure, the process's own (anonymous) memory: the rest of its RSS is Node's binary, shared by
// all of them; a bare Node process is shown as the floor.
// Prints figures; asserts nothing.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchBootstrap, get, proxyCommand, startPrintingPort, stopChildrenOnInterrupt, waitFor } from './harness.js';
import { LOAD_CORE, pinned, PROXY_CORE } from './pinning.js';

const IDLE_S = Number(process.env.IDLE ?? 5);
const SETTLE_S = Number(process.env.SETTLE ?? 20);
const LONG_S = Number(process.env.LONG ?? 150);
const LOAD_S = Number(process.env.LOAD ?? 30);
const LOAD_CONNECTIONS = Number(process.env.LOAD_CONNECTIONS ?? 1000);
const root = join(import.meta.dirname, '../..');
const dir = mkdtempSync(join(tmpdir(), 'bench-memory-'));
const children: ChildProcess[] = [];
stopChildrenOnInterrupt(children, dir);

/** Issue 18's goals, in MB: at idle, and a worker's under load. */
const GOALS: Record<string, number> = { supervisor: 55, admin: 45, worker_0: 45 };
const LOAD_GOAL_MB = 100;

/** VmRSS of a process, in MB (undefined once it is gone). */
function rssMb(pid: number): number | undefined {
  try {
    const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb === undefined ? undefined : Number(kb) / 1024;
  } catch {
    return undefined;
  }
}

/** The supervisor's children by the name each was forked with (`admin`, `worker_0`). */
function roles(supervisor: number): Map<string, number> {
  const out = new Map<string, number>([['supervisor', supervisor]]);
  const ps = spawnSync('ps', ['-o', 'pid=,args=', '--ppid', String(supervisor)], { encoding: 'utf8' }).stdout;
  for (const line of ps.split('\n')) {
    const m = /^\s*(\d+)\s+.*\s(\S+)$/.exec(line);
    if (m) out.set(m[2]!, Number(m[1]));
  }
  return out;
}

const mb = (v: number | undefined) => (v === undefined ? '   gone' : `${v.toFixed(1).padStart(6)} MB`);

/** Anonymous (the process's own) resident memory, in MB: RSS less the mapped files (Node's binary and libraries). */
function anonMb(pid: number): number | undefined {
  try {
    const kb = /^Anonymous:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1];
    return kb === undefined ? undefined : Number(kb) / 1024;
  } catch {
    return undefined;
  }
}

function printTree(tree: Map<string, number>): void {
  for (const [role, pid] of tree) console.log(`  ${role.padEnd(12)} ${mb(rssMb(pid))}   (goal ≤ ${GOALS[role] ?? '?'} MB; its own: ${mb(anonMb(pid))})`);
}

try {
  const upstream = await startPrintingPort(children, LOAD_CORE, [join(root, 'scripts/bench/upstream.mjs')]);
  writeFileSync(join(dir, 'bootstrap.json'), JSON.stringify(benchBootstrap(upstream.port)));
  const adminFile = join(dir, 'admin.address');
  const command = proxyCommand(root);
  const proxy = spawn(...pinned(PROXY_CORE, command.command, [...command.args, '-c', join(dir, 'bootstrap.json'), '--concurrency', '1', '--admin-address-path', adminFile, '--use-dynamic-base-id', '-l', 'warning']), { stdio: ['ignore', 'inherit', 'inherit'], env: command.env });
  children.push(proxy);
  const admin = await waitFor(() => (existsSync(adminFile) ? readFileSync(adminFile, 'utf8') || undefined : undefined));
  await waitFor(async () => ((await get(`http://${admin}/ready`)) === 'LIVE\n' ? true : undefined));
  const port = Number(/:(\d+)\n/.exec(await get(`http://${admin}/listeners`))![1]);
  // One request through, so the worker has loaded what serving takes; then the tree idles.
  await get(`http://127.0.0.1:${port}/`);
  await new Promise((r) => setTimeout(r, IDLE_S * 1000)); // a measurement setting: how long "idle" is
  const tree = roles(proxy.pid!);
  console.log(`proxy memory (VmRSS) on the bench bootstrap, node ${process.version}: at idle, ${IDLE_S} s after going live`);
  printTree(tree);
  // The floor: a Node process that has loaded nothing, measured in the same run (without
  // NODE_EXTRA_CA_CERTS, as the proxy's processes run).
  const bareEnv = { ...process.env };
  delete bareEnv.NODE_EXTRA_CA_CERTS;
  const bare = spawn(...pinned(LOAD_CORE, process.execPath, ['-e', 'setInterval(() => {}, 1000)']), { stdio: 'ignore', env: bareEnv });
  children.push(bare);
  await new Promise((r) => setTimeout(r, (SETTLE_S - IDLE_S) * 1000)); // a measurement setting: how long settling takes
  console.log(`settled, ${SETTLE_S} s after going live`);
  printTree(tree);
  console.log(`  ${'bare node'.padEnd(12)} ${mb(rssMb(bare.pid!))}   (a Node process running nothing, the floor; its own: ${mb(anonMb(bare.pid!))})`);
  bare.kill('SIGTERM');
  if (LONG_S > SETTLE_S) {
    await new Promise((r) => setTimeout(r, (LONG_S - SETTLE_S) * 1000)); // a measurement setting: how long a long idle is
    console.log(`after ${LONG_S} s of idling`);
    printTree(tree);
  }

  if (spawnSync('wrk', ['--version']).error !== undefined) {
    console.log('  not measured: the worker under load (wrk is not installed: apt-get install wrk)');
  } else {
    const worker = tree.get('worker_0')!;
    let peak = 0;
    const sampler = setInterval(() => (peak = Math.max(peak, rssMb(worker) ?? 0)), 200);
    const load = spawn(...pinned(LOAD_CORE, 'wrk', ['-t1', `-c${LOAD_CONNECTIONS}`, `-d${LOAD_S}s`, `http://127.0.0.1:${port}/`]), { stdio: ['ignore', 'pipe', 'inherit'] });
    children.push(load);
    let out = '';
    load.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
    await new Promise((r) => load.once('exit', r));
    clearInterval(sampler);
    const rps = /Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? '?';
    console.log(`  worker_0 under ${LOAD_CONNECTIONS} keep-alive connections for ${LOAD_S} s (${rps} req/s): peak ${mb(peak)}   (goal ≤ ${LOAD_GOAL_MB} MB)`);
  }
} finally {
  for (const c of children) if (c.exitCode === null) c.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
}
