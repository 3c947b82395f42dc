import { createReadStream, readFile, unlink } from 'node:fs';
import { basename } from 'node:path';
import { promisify } from 'node:util';
import { CONTENTION_STATS } from '../../shared/contention.js';
import type { ToAdmin } from '../../shared/ipc.js';
import { getLogger } from '../../shared/log/logger.js';
import { applyProfilerOrder, heapSnapshotFile, isProfilerRunning, type ProfilerKind, type ProfilerOutcome } from '../../shared/profiler.js';
import { JSON_TYPE, protoJson, type AdminEndpoint, type AdminRequest, type AdminResponse } from '../endpoint.js';
import type { StatsCollector } from '../stats-collector.js';
import type { AdminState } from '../state.js';
import type { SupervisorClient } from '../supervisor-client.js';

/**
 * /cpuprofiler, /heapprofiler, /allocprofiler, /heap_dump and /contention. Envoy's profilers are gperftools';
 * here they are V8's, in every process of the tree (shared/profiler.ts), with Envoy's
 * parameters, status codes and messages. The differences: the files are one per process, named
 * by role next to `admin.profile_path` (/heapprofiler lists them when it stops; /cpuprofiler
 * answers `OK` as Envoy does and logs them), /heap_dump returns a V8 heap snapshot of one
 * process (`process=`, default worker_0), and /contention measures event-loop delay
 * (shared/contention.ts).
 */

const log = getLogger('admin', import.meta.url);
/** fs.promises.readFile without node:fs/promises, which loads readline and more into an admin that starts without them. */
const readFileText = promisify(readFile);
type ProfilerReply = Extract<ToAdmin, { type: 'profiler_result' }>;

const ENABLE_USAGE = '?enable=<y|n>\n';
const HEAP_DUMP_TIMEOUT_MS = 65_000;

/** Envoy's rule: exactly one parameter, `enable`, valued `y` or `n`. */
function enableParam(rq: AdminRequest): boolean | undefined {
  if (rq.params.length !== 1 || rq.params[0]![0] !== 'enable') return undefined;
  const v = rq.params[0]![1];
  return v === 'y' ? true : v === 'n' ? false : undefined;
}

export function profilingEndpoints(state: AdminState, supervisor: SupervisorClient, collector: StatsCollector): AdminEndpoint[] {
  const path = state.server.profilePath;

  /** Starts `kind` in the admin process, then in the rest of the tree; undoes it all if any part fails. */
  async function start(kind: ProfilerKind): Promise<string[]> {
    const own = await applyProfilerOrder({ kind, enable: true, path }, 'admin');
    if (own.error) return [own.error];
    const reply = await supervisor.request<ProfilerReply>((id) => ({ type: 'profiler', id, kind, enable: true }));
    const errors = reply ? reply.outcomes.flatMap((o) => (o.error ? [o.error] : [])) : ['the supervisor did not answer'];
    if (errors.length) await applyProfilerOrder({ kind, enable: false, path }, 'admin');
    return errors;
  }

  /** Stops `kind` everywhere; the files written. */
  async function stop(kind: ProfilerKind): Promise<ProfilerOutcome[]> {
    const own = await applyProfilerOrder({ kind, enable: false, path }, 'admin');
    const reply = await supervisor.request<ProfilerReply>((id) => ({ type: 'profiler', id, kind, enable: false }));
    const outcomes = [own, ...(reply?.outcomes ?? [{ error: 'the supervisor did not answer' }])];
    for (const o of outcomes) if (o.error) log.error(`${kind} profiler: ${o.error}`);
    return outcomes;
  }

  const files = (outcomes: ProfilerOutcome[]) => outcomes.flatMap((o) => (o.file ? [o.file] : []));

  return [
    {
      path: '/cpuprofiler',
      help: 'Enable/disable the CPU profiler (V8, in every process; writes <profile_path>.<process>.cpuprofile)',
      mutates: true,
      params: [{ name: 'enable', help: 'y to start, n to stop and write the profiles', choices: ['y', 'n'] }],
      handle: async (rq) => {
        const enable = enableParam(rq);
        if (enable === undefined) return { status: 400, body: ENABLE_USAGE };
        if (enable) {
          if (isProfilerRunning('cpu')) return { status: 200, body: 'OK\n' };
          const errors = await start('cpu');
          if (errors.length) {
            log.error(`cannot start the CPU profiler: ${errors.join('; ')}`);
            return { status: 500, body: 'failure to start the profiler' };
          }
          return { status: 200, body: 'OK\n' };
        }
        if (isProfilerRunning('cpu')) log.info(`CPU profiles written: ${files(await stop('cpu')).join(', ')}`);
        return { status: 200, body: 'OK\n' };
      },
    },
    {
      path: '/heapprofiler',
      help: 'Enable/disable the heap profiler (V8 sampling, in every process; writes <profile_path>.<process>.heapprofile)',
      mutates: true,
      params: [{ name: 'enable', help: 'y to start, n to stop and write the profiles', choices: ['y', 'n'] }],
      handle: async (rq) => {
        const enable = enableParam(rq);
        if (enable === undefined) return { status: 400, body: ENABLE_USAGE };
        if (enable) {
          if (isProfilerRunning('heap')) return { status: 400, body: 'Fail to start heap profiler: already started' };
          const errors = await start('heap');
          if (errors.length) {
            log.error(`cannot start the heap profiler: ${errors.join('; ')}`);
            return { status: 500, body: 'Fail to start the heap profiler' };
          }
          return { status: 200, body: 'Starting heap profiler' };
        }
        if (!isProfilerRunning('heap')) return { status: 400, body: 'Fail to stop heap profiler: not started' };
        const written = files(await stop('heap'));
        return {
          status: 200,
          body: `Heap profiler stopped and data written to ${written.join(', ')}. Open them in Chrome DevTools (Memory, Load profile) or https://www.speedscope.app.`,
        };
      },
    },
    {
      path: '/allocprofiler',
      help: 'enable/disable the allocation profiler (V8 sampling heap profiler in every process; stopping it returns the profiles, by process, as JSON)',
      mutates: true,
      params: [{ name: 'enable', help: 'y to start, n to stop and return the profiles', choices: ['y', 'n'] }],
      handle: async (rq): Promise<AdminResponse> => {
        const enable = enableParam(rq);
        if (enable === undefined) return { status: 400, body: ENABLE_USAGE };
        // V8 has one sampling heap profiler: /heapprofiler's, which this shares.
        if (enable) {
          if (isProfilerRunning('heap')) return { status: 400, body: 'Allocation profiler has already started' };
          const errors = await start('heap');
          if (errors.length) {
            log.error(`cannot start the allocation profiler: ${errors.join('; ')}`);
            return { status: 500, body: 'Allocation profiler could not start' };
          }
          return { status: 200, body: 'OK\n' };
        }
        if (!isProfilerRunning('heap')) return { status: 400, body: 'Allocation profiler is not started' };
        const profiles: Record<string, unknown> = {};
        for (const file of files(await stop('heap'))) {
          const role = /\.([^.]+)\.heapprofile$/.exec(file)?.[1] ?? basename(file);
          try {
            profiles[role] = JSON.parse(await readFileText(file, 'utf8'));
          } finally {
            unlink(file, () => {});
          }
        }
        return { status: 200, contentType: JSON_TYPE, body: JSON.stringify(profiles) };
      },
    },
    {
      path: '/heap_dump',
      help: 'dump a V8 heap snapshot of one process (it pauses while V8 writes it)',
      mutates: false,
      params: [{ name: 'process', help: 'main, admin or worker_<n> (default worker_0)' }],
      handle: async (rq): Promise<AdminResponse> => {
        const target = rq.query.get('process') || 'worker_0';
        const workerIndex = Number(/^worker_(\d+)$/.exec(target)?.[1] ?? -1);
        if (target !== 'main' && target !== 'admin' && !(workerIndex >= 0 && workerIndex < state.server.concurrency)) {
          return { status: 400, body: `process must be main, admin or worker_0 … worker_${state.server.concurrency - 1}\n` };
        }
        let outcome: ProfilerOutcome;
        if (target === 'admin') outcome = heapSnapshotFile('admin');
        else {
          const reply = await supervisor.request<ProfilerReply>((id) => ({ type: 'heap_dump', id, process: target }), HEAP_DUMP_TIMEOUT_MS);
          outcome = reply?.outcomes[0] ?? { error: 'the supervisor did not answer' };
        }
        if (!outcome.file) return { status: 500, body: `heap dump of ${target} failed: ${outcome.error}\n` };
        const file = outcome.file;
        const stream = createReadStream(file);
        stream.once('close', () => unlink(file, () => {}));
        return {
          status: 200,
          contentType: 'application/octet-stream',
          headers: { 'content-disposition': `attachment; filename="${basename(file)}"` },
          body: stream,
        };
      },
    },
    {
      path: '/contention',
      help: 'dump current Envoy mutex contention stats (event-loop delay here) if mutex tracing is enabled',
      mutates: false,
      handle: async () => {
        if (!state.server.enableMutexTracing) {
          return { status: 200, body: 'Mutex contention tracing is not enabled. To enable, run Envoy with flag --enable-mutex-tracing.' };
        }
        await collector.refresh();
        const merged = collector.merged;
        const current = [...(merged.gauges.get(CONTENTION_STATS.current)?.bySource.values() ?? [])];
        return {
          status: 200,
          contentType: JSON_TYPE,
          body: protoJson({
            num_contentions: String(merged.counters.get(CONTENTION_STATS.count)?.value ?? 0),
            current_wait_cycles: String(current.length ? Math.max(...current) : 0),
            lifetime_wait_cycles: String(merged.counters.get(CONTENTION_STATS.lifetime)?.value ?? 0),
          }),
        };
      },
    },
  ];
}
