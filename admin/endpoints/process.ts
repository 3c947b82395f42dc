import { JSON_TYPE, protoJson, type AdminEndpoint } from '../endpoint.js';
import type { StatsCollector } from '../stats-collector.js';
import type { AdminState } from '../state.js';

/**
 * /hot_restart_version (as --hot-restart-version prints it) and /memory: allocation figures of
 * the whole process tree, summed (V8's heap stands in for Envoy's tcmalloc figures: allocated =
 * heap used + external memory, heap_size = heap reserved, total_physical_bytes = resident set;
 * the tcmalloc-only fields are 0). `per_process` adds each process's figures.
 */
export function processEndpoints(state: AdminState, collector: StatsCollector): AdminEndpoint[] {
  return [
    {
      path: '/hot_restart_version',
      help: 'print the hot restart compatibility version',
      mutates: false,
      handle: () => ({ status: 200, body: state.info.hotRestartVersion }),
    },
    {
      path: '/hot_restart_status',
      help: 'print where this epoch and its parent are in a hot restart (phase, parent state, parent terminate deadline), and why the server drains',
      mutates: false,
      handle: () => {
        const h = state.hotRestart;
        const body: Record<string, unknown> = { enabled: h.enabled };
        // While DRAINING: why (healthcheck_fail, drain_listeners, hot_restart, shutdown).
        const reasons = state.drainingBecause;
        if (reasons.length) body.drain_reasons = reasons;
        if (h.enabled) {
          Object.assign(body, { base_id: h.baseId, restart_epoch: h.restartEpoch, socket_path: h.socketPath, phase: h.phase, parent: h.parent });
          if (h.parentTerminateAtMs !== undefined) {
            body.parent_terminate_at = new Date(h.parentTerminateAtMs).toISOString();
            body.parent_terminate_in_seconds = Math.max(0, Math.ceil((h.parentTerminateAtMs - Date.now()) / 1000));
          }
        }
        return { status: 200, contentType: JSON_TYPE, body: protoJson(body) };
      },
    },
    {
      path: '/memory/tcmalloc',
      help: 'print TCMalloc stats',
      mutates: false,
      // As an Envoy build without tcmalloc answers: Node's allocator is V8's (see /memory).
      handle: async () => ({ status: 501, contentType: 'text/plain', body: 'Envoy was not built with tcmalloc.\n' }),
    },
    {
      path: '/memory',
      help: 'print current allocation/heap usage',
      mutates: false,
      params: [{ name: 'per_process', help: 'Also print the figures of each process of the tree (this proxy)' }],
      handle: async (rq) => {
        await collector.refresh();
        const merged = collector.merged;
        const bySource = (name: string) => merged.gauges.get(name)?.bySource ?? new Map<string, number>();
        const figures = (pick: (m: Map<string, number>) => number) => {
          const allocated = pick(bySource('server.memory_allocated'));
          const heap = pick(bySource('server.memory_heap_size'));
          return {
            allocated: String(allocated),
            heap_size: String(heap),
            pageheap_unmapped: '0',
            pageheap_free: String(Math.max(0, heap - allocated)),
            total_thread_cache: '0',
            total_physical_bytes: String(pick(bySource('server.memory_physical_size'))),
          };
        };
        const sum = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);
        const body: Record<string, unknown> = figures(sum);
        if (rq.query.has('per_process')) {
          const sources = [...bySource('server.memory_allocated').keys()].sort();
          body.processes = Object.fromEntries(sources.map((s) => [s, figures((m) => m.get(s) ?? 0)]));
        }
        return { status: 200, contentType: JSON_TYPE, body: protoJson(body) };
      },
    },
  ];
}
