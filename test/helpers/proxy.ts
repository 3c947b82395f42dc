import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import { proxyBin, repoRoot, tempDir } from './cli.js';

/**
 * Starts the real proxy (compiled, as `npx proxy` runs it) on a bootstrap whose ports are 0,
 * finds the admin address through --admin-address-path and the listeners' real ports through
 * GET /listeners, and waits for /ready. `stop()` signals the supervisor by pid and waits for
 * the whole tree to be gone.
 */

export interface RunningProxy {
  process: ChildProcess;
  pid: number;
  admin: string;
  /** The --admin-address-path file (rewritten if the admin interface moves). */
  adminAddressPath: string;
  ports: Map<string, number>;
  output: () => string;
  /**
   * The hot-restart base id. Unless the test gives one, the proxy picks a free one
   * (--use-dynamic-base-id), so runs side by side never share a family; later epochs of the same
   * family pass `--base-id <this>`, as an operator's start script does with --base-id-path.
   */
  baseId: number;
  /** The supervisor's children (admin, workers) by pid, read from /proc. */
  children: () => number[];
  stop: (signal?: NodeJS.Signals) => Promise<number | null>;
}

export interface HttpResult {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** Writes `text` (a request as bytes on the wire) to 127.0.0.1:`port` and resolves with all that comes back before the connection closes. */
export function rawExchange(port: number, text: string): Promise<string> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    let got = '';
    s.on('data', (d) => (got += d));
    s.on('error', () => undefined);
    s.on('close', () => resolve(got));
    s.write(text);
  });
}

export function httpRequest(url: string, options: { method?: string; headers?: Record<string, string>; body?: string | Buffer; agent?: false } = {}): Promise<HttpResult> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: options.method ?? 'GET', headers: options.headers, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

export function childPids(pid: number): number[] {
  const out = spawnSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' }).stdout;
  return out.split('\n').map((s) => Number(s.trim())).filter((n) => n > 0);
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Polls `probe` until it gives a value, or fails naming `what` after `timeoutMs`. The deadline only
 * turns a hang into a clear failure: generous, so a loaded machine is slower, not red.
 */
export async function waitFor<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined && v !== false) return v as T;
    } catch (err) {
      if ((err as { fatal?: boolean }).fatal) throw err;
      // not yet
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * `promise`, or a failure naming `what` if it has not settled after `timeoutMs`: for something that
 * must happen at all, where hanging until the runner's own limit would say nothing. The deadline
 * is generous on purpose; it is not a measurement.
 */
export async function withDeadline<T>(what: string, promise: Promise<T>, timeoutMs = 30_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), timeoutMs);
  });
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

const running = new Set<RunningProxy>();
/** Base ids of families one of whose epochs died by a signal (its region is then the helper's to remove). */
const killedFamilies = new Set<number>();

/** A counter's or gauge's value by exact name, through GET /stats (NaN when there is none). */
export async function statValue(proxy: RunningProxy, name: string): Promise<number> {
  const body = (await httpRequest(`http://${proxy.admin}/stats?filter=${encodeURIComponent(`^${name.replace(/\./g, '\\.')}$`)}`)).body;
  return Number(/: (\d+)/.exec(body)?.[1] ?? NaN);
}

/** Stops every proxy a test file started (call from `after`). */
export async function stopAllProxies(): Promise<void> {
  await Promise.all([...running].map((p) => p.stop('SIGKILL')));
}

/** `options.cwd`: the working directory of the proxy (the repository's unless given). */
export async function startProxy(bootstrap: object, args: string[] = [], env: NodeJS.ProcessEnv = {}, options: { cwd?: string } = {}): Promise<RunningProxy> {
  const tmp = tempDir('proxy-run-');
  const config = tmp.file('bootstrap.json', JSON.stringify(bootstrap));
  const adminPath = join(tmp.dir, 'admin-address');
  // Every proxy a test starts is its own hot-restart family, unless the test says otherwise.
  const ownsIdentity = args.some((a) => ['--base-id', '--restart-epoch', '--use-dynamic-base-id', '--disable-hot-restart'].includes(a));
  const baseIdPath = join(tmp.dir, 'base-id');
  /** Whether this proxy's base id is known (given, or read back once it started): never guess at a region. */
  let familyKnown = args.includes('--base-id');
  const identity = ownsIdentity ? [] : ['--use-dynamic-base-id', '--base-id-path', baseIdPath];
  const readBaseId = () => {
    if (familyKnown || !identity.length || !existsSync(baseIdPath)) return;
    proxy.baseId = Number(readFileSync(baseIdPath, 'utf8'));
    familyKnown = true;
  };
  const child = spawn(process.execPath, [proxyBin, '-c', config, '--admin-address-path', adminPath, ...identity, ...args], {
    cwd: options.cwd ?? repoRoot,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const pid = child.pid!;
  const proxy: RunningProxy = {
    process: child,
    pid,
    admin: '',
    adminAddressPath: adminPath,
    baseId: args.includes('--base-id') ? Number(args[args.indexOf('--base-id') + 1]) : 0,
    ports: new Map(),
    output: () => output,
    children: () => childPids(pid),
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      const kids = childPids(pid);
      if (child.exitCode === null && child.signalCode === null) process.kill(pid, signal);
      const code = await exited;
      // The children exit on their own once their supervisor is gone; make sure in every case.
      await waitFor('the proxy\'s children to exit', () => kids.every((k) => !alive(k)) || undefined, 10_000).catch(() => {
        for (const k of kids) if (alive(k)) process.kill(k, 'SIGKILL');
      });
      running.delete(proxy);
      readBaseId();
      // A family killed by a signal (SIGKILL, by stop() or by the test) cannot remove its
      // hot-restart region; do it for it once no epoch of the family is left. (A clean exit must
      // remove it itself: tests check that.)
      // Epochs of one family can stop in any order (one by a signal, another cleanly as its child
      // terminated it), so the decision is the last one's, remembering any kill.
      if (child.signalCode !== null && familyKnown) killedFamilies.add(proxy.baseId);
      if (familyKnown && killedFamilies.has(proxy.baseId) && ![...running].some((other) => other.baseId === proxy.baseId)) {
        killedFamilies.delete(proxy.baseId);
        const region = `/dev/shm/proxy_shared_memory_${proxy.baseId * 10}`;
        rmSync(region, { force: true });
        rmSync(`${region}.initializing`, { force: true });
      }
      tmp.cleanup();
      return code;
    },
  };
  running.add(proxy);
  try {
    proxy.admin = await waitFor('the admin address', () => {
      if (child.exitCode !== null) throw Object.assign(new Error(`proxy exited (${child.exitCode}):\n${output}`), { fatal: true });
      return existsSync(adminPath) ? readFileSync(adminPath, 'utf8') || undefined : undefined;
    });
    readBaseId();
    const listeners = JSON.parse((await httpRequest(`http://${proxy.admin}/listeners?format=json`)).body) as {
      listener_statuses: { name: string; local_address: { socket_address?: { port_value: number } } }[];
    };
    for (const l of listeners.listener_statuses) if (l.local_address.socket_address) proxy.ports.set(l.name, l.local_address.socket_address.port_value);
    // Up: LIVE, or DRAINING when it starts failing health checks (flags_path's drain file).
    await waitFor('/ready', async () => {
      const ready = await httpRequest(`http://${proxy.admin}/ready`);
      return ready.status === 200 || ready.body.trim() === 'DRAINING' || undefined;
    });
  } catch (err) {
    await proxy.stop('SIGKILL');
    throw new Error(`${(err as Error).message}\n--- proxy output ---\n${output}`);
  }
  return proxy;
}

/**
 * Holds process `pid` stopped (SIGSTOP) for `ms`, then lets it go on (SIGCONT): a stall of its
 * event loop, the stimulus of the watchdog tests (a duration to impose, not a condition to wait for).
 */
export async function stallProcess(pid: number, ms: number): Promise<void> {
  process.kill(pid, 'SIGSTOP');
  try {
    await new Promise((resolve) => setTimeout(resolve, ms));
  } finally {
    process.kill(pid, 'SIGCONT');
  }
}
