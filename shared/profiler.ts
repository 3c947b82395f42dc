import { closeSync, openSync, writeFileSync } from 'node:fs';
import type { Session } from 'node:inspector/promises';
import { inspectorModule, v8Module } from './builtins.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mapProfileToSources } from './bundle-sources.js';
import { getLogger } from './log/logger.js';

/**
 * This process's share of /cpuprofiler, /heapprofiler and /heap_dump, through V8's own
 * profilers over an in-process inspector session (no --inspect port is opened). Each process of
 * the tree writes its own file next to `admin.profile_path`, named by its role:
 *
 *   <profile_path>.<role>.cpuprofile    V8 CPU profile (Chrome DevTools → Performance, speedscope)
 *   <profile_path>.<role>.heapprofile   V8 sampling heap profile of allocations, including objects
 *                                       collected since (Chrome DevTools → Memory, speedscope)
 *
 * and a heap dump is a V8 heap snapshot (Chrome DevTools → Memory → Load).
 */

const log = getLogger('admin', import.meta.url);

export type ProfilerKind = 'cpu' | 'heap';

export interface ProfilerOrder {
  kind: ProfilerKind;
  enable: boolean;
  /** admin.profile_path */
  path: string;
}

/** What one process did: the file it wrote (on stop), or why it could not start. */
export interface ProfilerOutcome {
  file?: string;
  error?: string;
}

const EXTENSION: Record<ProfilerKind, string> = { cpu: 'cpuprofile', heap: 'heapprofile' };

let session: Session | undefined;
const running = new Set<ProfilerKind>();

function connected(): Session {
  if (!session) {
    session = new (inspectorModule().Session)();
    session.connect();
  }
  return session;
}

export function profileFile(base: string, role: string, kind: ProfilerKind): string {
  return `${base}.${role}.${EXTENSION[kind]}`;
}

/** Starts or stops one profiler in this process. Starting one that runs, or stopping one that does not, does nothing. */
export async function applyProfilerOrder(order: ProfilerOrder, role: string): Promise<ProfilerOutcome> {
  const file = profileFile(order.path, role, order.kind);
  const s = connected();
  if (order.enable) {
    if (running.has(order.kind)) return {};
    try {
      // The file is written when the profiler stops; find out now that it cannot be, as gperftools does.
      closeSync(openSync(file, 'w'));
      if (order.kind === 'cpu') {
        await s.post('Profiler.enable');
        await s.post('Profiler.start');
      } else {
        await s.post('HeapProfiler.enable');
        // Collected objects too: allocation sites of short-lived garbage are what a proxy's memory churn is made of.
        await s.post('HeapProfiler.startSampling', { samplingInterval: 32_768, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true } as never);
      }
    } catch (err) {
      return { error: `${file}: ${(err as Error).message}` };
    }
    running.add(order.kind);
    log.info(`${order.kind} profiler started; stopping it writes ${file}`);
    return {};
  }
  if (!running.has(order.kind)) return {};
  running.delete(order.kind);
  try {
    const { profile } =
      order.kind === 'cpu' ? await s.post('Profiler.stop') : ((await s.post('HeapProfiler.stopSampling')) as { profile: unknown });
    writeFileSync(file, JSON.stringify(mapProfileToSources(profile)));
  } catch (err) {
    return { error: `${file}: ${(err as Error).message}` };
  }
  log.info(`${order.kind} profiler stopped; wrote ${file}`);
  return { file };
}

/** A V8 heap snapshot of this process in a temporary file (the caller streams it and removes it). */
export function heapSnapshotFile(role: string): ProfilerOutcome {
  try {
    return { file: v8Module().writeHeapSnapshot(join(tmpdir(), `proxy-${role}-${process.pid}-${Date.now()}.heapsnapshot`)) };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

/** Envoy's default `admin.profile_path`. */
export const DEFAULT_PROFILE_PATH = '/var/log/envoy/envoy.prof';

export function isProfilerRunning(kind: ProfilerKind): boolean {
  return running.has(kind);
}
