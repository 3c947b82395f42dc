import type { JsonObject } from '../shared/config/proto-json.js';
import { obj } from '../shared/config/access.js';
import type { ServerContext } from '../shared/ipc.js';
import { startContentionTracing } from '../shared/contention.js';
import { applyProfilerOrder, DEFAULT_PROFILE_PATH, heapSnapshotFile, type ProfilerKind, type ProfilerOrder, type ProfilerOutcome } from '../shared/profiler.js';
import type { ToWorkers } from './worker-broadcast.js';

/**
 * The supervisor's part in /cpuprofiler, /heapprofiler and /heap_dump: it profiles itself and
 * has every worker do the same (the admin process does its own), and keeps the running
 * profilers in the context so that a replacement worker starts profiling too. A start that
 * fails anywhere (the profile path is not writable) is undone everywhere, so the profilers are
 * either running in the whole tree or in none of it.
 */

/** A heap snapshot of a large worker takes a while. */
const HEAP_DUMP_TIMEOUT_MS = 60_000;

export function profilePathOf(bootstrap: JsonObject): string {
  const path = obj(bootstrap.admin).profile_path;
  return typeof path === 'string' && path !== '' ? path : DEFAULT_PROFILE_PATH;
}

export class TreeProfiling {
  constructor(
    private readonly context: ServerContext,
    private readonly toWorkers: ToWorkers,
  ) {
    if (context.enableMutexTracing) startContentionTracing();
  }

  /** The outcomes of the supervisor (first) and of each worker. */
  async profiler(kind: ProfilerKind, enable: boolean): Promise<ProfilerOutcome[]> {
    const order: ProfilerOrder = { kind, enable, path: this.context.profilePath };
    const outcomes = [await applyProfilerOrder(order, 'main')];
    if (!(enable && outcomes[0]!.error)) outcomes.push(...(await this.toWorkers((ack) => ({ type: 'profiler', order, ack }))));
    const failed = enable && outcomes.some((o) => o.error);
    if (failed) {
      const undo: ProfilerOrder = { ...order, enable: false };
      await applyProfilerOrder(undo, 'main');
      await this.toWorkers((ack) => ({ type: 'profiler', order: undo, ack }));
    }
    const others = this.context.profilers.filter((k) => k !== kind);
    this.context.profilers = enable && !failed ? [...others, kind] : others;
    return outcomes;
  }

  /** A heap snapshot of the supervisor (`main`) or of one worker (`worker_<n>`). */
  async heapDump(process: string): Promise<ProfilerOutcome> {
    if (process === 'main') return heapSnapshotFile('main');
    const index = Number(/^worker_(\d+)$/.exec(process)?.[1] ?? -1);
    if (index < 0 || index >= this.context.concurrency) return { error: `no process named '${process}'` };
    const [outcome] = await this.toWorkers((ack) => ({ type: 'heap_dump', ack }), { only: index, timeoutMs: HEAP_DUMP_TIMEOUT_MS });
    return outcome ?? { error: `${process} did not answer` };
  }
}
