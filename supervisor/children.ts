import { fork, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sendTo } from '../shared/ipc.js';
import { getLogger } from '../shared/log/logger.js';
import { packageRoot, runningBundled, runningCompiled } from '../shared/paths.js';

/**
 * One child of the supervisor (the admin process or one worker): forked (or taken from the
 * spares forked at start, spares.ts) and given what it needs, and re-forked with backoff when it
 * dies unexpectedly.
 * The listening sockets stay open in the supervisor meanwhile, so connections queue in the
 * kernel until the replacement accepts them.
 */

const log = getLogger('main', import.meta.url);

/**
 * A child that dies after running stably is replaced at once (connections wait in the kernel
 * meanwhile: every millisecond counts); one that dies again within STABLE_AFTER_MS waits
 * FIRST_BACKOFF_MS, then twice as long each time, up to MAX_BACKOFF_MS.
 */
const FIRST_BACKOFF_MS = 100;
const MAX_BACKOFF_MS = 10_000;
/** A child that ran this long before dying is restarted at once again. */
const STABLE_AFTER_MS = 30_000;

export type Role = 'admin' | 'worker';

export interface ChildOptions<In> {
  role: Role;
  /** `admin`, `worker_0`, … (also the child's `%t` in logs). */
  name: string;
  descriptors: () => (number | 'ignore')[];
  /** A process forked earlier for this child, to start instead of forking one (see spares.ts); taken once. */
  spare?: () => ChildProcess | undefined;
  onMessage: (message: In, child: ManagedChild<In>) => void;
  /** Called after every (re)start, to send the child its init message. */
  onStart: (child: ManagedChild<In>) => void;
  /** Called when the child exits, expectedly or not. */
  onExit?: (child: ManagedChild<In>) => void;
}

/** The script a child is forked from, and its arguments (the child's name is the last). */
export function childCommand(role: Role, name: string): [script: string, args: string[]] {
  // From the bundles, the launcher runs the role's bundle with its code cache (bin/role-launcher.cjs).
  if (runningBundled) return [join(packageRoot, 'bin/role-launcher.cjs'), [role, name]];
  const ext = runningCompiled ? 'js' : 'ts';
  return [fileURLToPath(new URL(`../${role}/main.${ext}`, import.meta.url)), [name]];
}

/**
 * A child's environment: the supervisor's, without NODE_EXTRA_CA_CERTS. Node 20 reads and parses
 * that file when a process starts, before any of its code runs (~80 ms for a system CA bundle on
 * the bench machine: a bare `node` started in 120 ms with it, 38 ms without), and no child would
 * ever use it: every TLS connection the proxy makes trusts only its cluster's own `trusted_ca`, as
 * Envoy's do (shared/extensions/transport-sockets/tls/upstream.ts), never Node's default store.
 */
function childEnvironment(): NodeJS.ProcessEnv {
  if (process.env.NODE_EXTRA_CA_CERTS === undefined) return process.env;
  const env = { ...process.env };
  delete env.NODE_EXTRA_CA_CERTS;
  return env;
}

/** Forks a child of `role` with `descriptors` after stdin, stdout, stderr and the IPC channel (fd 4 on). */
export function forkChild(role: Role, name: string, descriptors: (number | 'ignore')[]): ChildProcess {
  return fork(...childCommand(role, name), {
    env: childEnvironment(),
    ...launchOptions(role),
    stdio: ['ignore', 'inherit', 'inherit', 'ipc', ...descriptors],
    serialization: 'advanced',
  });
}

interface Launcher {
  v8FlagsOf(role: Role): string[];
  launchOptions(role: Role, execArgv: string[]): { execPath?: string; execArgv: string[] };
}

let launcher: Launcher | undefined;

/**
 * The command line a child of `role` is forked with: Node's options as the supervisor was given
 * them, then the role's own V8 flags (bin/role-launcher.cjs: its code cache is made under them).
 * From the bundles, the launcher also opens the channel of a child with such flags itself.
 */
function launchOptions(role: Role): { execPath?: string; execArgv: string[] } {
  launcher ??= createRequire(import.meta.url)(join(packageRoot, 'bin/role-launcher.cjs')) as Launcher;
  return runningBundled ? launcher.launchOptions(role, process.execArgv) : { execArgv: [...process.execArgv, ...launcher.v8FlagsOf(role)] };
}

export class ManagedChild<In> {
  process: ChildProcess | undefined;
  restarts = 0;
  private backoffMs = 0;
  private startedAt = 0;
  private stopping = false;
  private restartTimer: NodeJS.Timeout | undefined;
  private exitWaiters: (() => void)[] = [];

  constructor(readonly options: ChildOptions<In>) {}

  get name(): string {
    return this.options.name;
  }

  get pid(): number | undefined {
    return this.process?.pid;
  }

  start(): void {
    this.startedAt = Date.now();
    const child = this.options.spare?.() ?? forkChild(this.options.role, this.options.name, this.options.descriptors());
    // A spare's own 'error' listener (spares.ts) gives way to this one.
    child.removeAllListeners('error');
    this.process = child;
    child.on('message', (m) => this.options.onMessage(m as In, this));
    // IPC write failures (a child exiting as it is written to) are not the supervisor's to die of.
    child.on('error', (err) => log.debug(`${this.options.name}: ${err.message}`));
    child.on('exit', (code, signal) => this.onExit(child, code, signal));
    this.options.onStart(this);
  }

  send<T>(message: T): boolean {
    return this.process ? sendTo(this.process, message) : false;
  }

  private onExit(child: ChildProcess, code: number | null, signal: NodeJS.Signals | null): void {
    if (child !== this.process) return;
    this.process = undefined;
    this.options.onExit?.(this);
    if (this.stopping) {
      for (const w of this.exitWaiters.splice(0)) w();
      return;
    }
    const ranMs = Date.now() - this.startedAt;
    if (ranMs > STABLE_AFTER_MS) this.backoffMs = 0;
    this.restarts++;
    const delayMs = this.backoffMs;
    this.backoffMs = Math.min(Math.max(this.backoffMs * 2, FIRST_BACKOFF_MS), MAX_BACKOFF_MS);
    // A replacement without backoff is forked before the line below is logged: a process's first
    // log line with its source location loads the bundle's line table (measured: 8-29 ms between
    // a worker's exit and its replacement's fork, most of it that line), and the new process's
    // start now runs meanwhile.
    if (delayMs === 0) this.start();
    else {
      this.restartTimer = setTimeout(() => {
        this.restartTimer = undefined;
        if (!this.stopping) this.start();
      }, delayMs);
    }
    log.error(`${this.name} (pid ${child.pid}) exited unexpectedly (${signal ? `signal ${signal}` : `code ${code}`}) after ${ranMs} ms; restarting in ${delayMs} ms (restart ${this.restarts})`);
  }

  /** Sends `shutdown`, waits up to `graceMs` (plus a second) for the exit, then kills. */
  stop(graceMs: number): Promise<void> {
    this.stopping = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    const child = this.process;
    if (!child) return Promise.resolve();
    return new Promise((resolve) => {
      const killer = setTimeout(() => {
        log.warn(`${this.name} (pid ${child.pid}) did not exit within ${graceMs + 1000} ms; killing it`);
        child.kill('SIGKILL');
      }, graceMs + 1000);
      this.exitWaiters.push(() => {
        clearTimeout(killer);
        resolve();
      });
      if (!this.send({ type: 'shutdown', graceMs })) child.kill('SIGTERM');
    });
  }
}
