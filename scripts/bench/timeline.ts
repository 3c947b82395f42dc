// When each step of a new epoch happens (TIMELINE=1 in startup.ts and hot-restart-load.ts): every
// process of the trees a bench starts has ./timeline-preload.cjs preloaded, which writes its marks
// to a file per process; a new epoch's steps are read from its supervisor's file and those of the
// worker and admin process it forked.
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const preload = join(import.meta.dirname, 'timeline-preload.cjs');

export class Timeline {
  private readonly dir: string;

  /** Marks are kept in `<parent>/timeline`. */
  constructor(parent: string) {
    this.dir = join(parent, 'timeline');
    mkdirSync(this.dir);
  }

  /** `env` with the preload added to NODE_OPTIONS, for a proxy whose processes are to be followed. */
  env(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
    return { ...env, PROXY_TIMELINE_DIR: this.dir, NODE_OPTIONS: `${env.NODE_OPTIONS ?? ''} --require=${preload}` };
  }

  /**
   * A process's marks, the first of each name: when (wall-clock ms) and the CPU time it had used by
   * then (ms); `role:<role>` holds its parent's pid.
   */
  private marksOf(pid: number): Map<string, Mark> {
    const marks = new Map<string, Mark>();
    for (const line of readFileSync(join(this.dir, String(pid)), 'utf8').split('\n').filter(Boolean)) {
      const [name, at, cpu] = line.split(' ');
      if (!marks.has(name!)) marks.set(name!, { at: Number(at), cpu: Number(cpu) });
    }
    return marks;
  }

  /**
   * The steps of the epoch whose supervisor is `supervisor`, in ms from its spawn (`spawnedAt`,
   * wall-clock); `servedAt` is when a client first got an answer from it. Read once the epoch is
   * LIVE: its admin process can be ready after the first request served. With each step, the CPU
   * time its process had used by then.
   */
  epochSteps(supervisor: number, spawnedAt: number, servedAt: number): Record<string, Mark> {
    const sup = this.marksOf(supervisor);
    const child = (role: string) => {
      const pid = readdirSync(this.dir).map(Number).find((p) => this.marksOf(p).get(`role:${role}`)?.at === supervisor);
      return pid === undefined ? new Map<string, Mark>() : this.marksOf(pid);
    };
    const [worker, admin] = [child('worker'), child('admin')];
    const at = (m: Map<string, Mark>, name: string): Mark => ({ at: (m.get(name)?.at ?? NaN) - spawnedAt, cpu: m.get(name)?.cpu ?? NaN });
    return {
      'supervisor: Node started': at(sup, 'node'),
      'supervisor: bundle compiling': at(sup, 'compiling'),
      'supervisor: bundle compiled': at(sup, 'compiled'),
      'supervisor: bundle ran': at(sup, 'ran'),
      'supervisor: worker forked': at(sup, 'fork'),
      'worker: process started': at(worker, 'start'),
      'worker: Node started': at(worker, 'node'),
      'worker: bundle compiling': at(worker, 'compiling'),
      'worker: bundle compiled': at(worker, 'compiled'),
      'worker: bundle ran': at(worker, 'ran'),
      'supervisor: configuration sent': at(sup, 'init-sent'),
      'worker: waiting for its configuration': at(worker, 'listening'),
      'worker: configuration taken': at(worker, 'init'),
      'worker: ready': at(worker, 'ready'),
      'worker: first connection accepted': at(worker, 'accept'),
      'worker: first upstream connection opening': at(worker, 'upstream-connect'),
      'worker: first upstream connection open': at(worker, 'upstream-connected'),
      // The parent epoch stops taking connections once the new one is LIVE: its workers and its admin process ready.
      'admin: process started': at(admin, 'start'),
      'admin: Node started': at(admin, 'node'),
      'admin: ready': at(admin, 'ready'),
      'first request served': { at: servedAt - spawnedAt, cpu: NaN },
    };
  }
}

/** When a step happened (ms), and the CPU time (ms) its process had used by then. */
export interface Mark {
  at: number;
  cpu: number;
}

/** Each step's median over `steps`, with its min and max, and the median CPU time its process had used by then. */
export function printSteps(steps: Record<string, Mark>[]): void {
  const median = (xs: number[]) => xs[Math.floor(xs.length / 2)]!;
  console.log(`    ${'step'.padEnd(42)} ${'ms'.padStart(5)}                  CPU ms used by then`);
  for (const step of Object.keys(steps[0] ?? {})) {
    const xs = steps.map((s) => s[step]!.at).sort((a, b) => a - b);
    const cpu = median(steps.map((s) => s[step]!.cpu).sort((a, b) => a - b));
    const range = `(min ${xs[0]!.toFixed(0)}, max ${xs[xs.length - 1]!.toFixed(0)})`;
    console.log(`    ${step.padEnd(42)} ${median(xs).toFixed(0).padStart(5)}   ${range.padEnd(20)} ${Number.isNaN(cpu) ? '' : cpu.toFixed(0).padStart(5)}`);
  }
}
