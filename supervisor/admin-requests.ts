import type { FromAdmin, LogLevelChange, ServerContext, ToAdmin, ToWorker } from '../shared/ipc.js';
import { applyLogLevelChange, getLogger, reopenLogs } from '../shared/log/logger.js';
import { stats } from '../shared/stats/process.js';
import type { DrainPlan } from './drain-plan.js';
import type { TreeProfiling } from './profiling.js';
import { RuntimeModifyError, type RuntimeLayers } from './runtime-layers.js';
import type { StatsRelay } from './stats-relay.js';
import type { ToWorkers } from './worker-broadcast.js';

/**
 * What the admin process asks the supervisor to do on an operator's behalf: collect stats,
 * change runtime values, log levels, health-check state and taps, drain, profile, reopen logs,
 * quit. A change that workers must apply is answered (`done`, or a result) only once every
 * worker has, so a script that POSTs and then acts sees the change. Changes are kept in the
 * context (or, for log levels, here), so a replacement child starts with them.
 */

const log = getLogger('main', import.meta.url);

/** The admin process's lifecycle messages, which the tree itself handles. */
export type AdminLifecycle = Extract<FromAdmin, { type: 'ready' } | { type: 'fatal' } | { type: 'counters' }>;
export type AdminRequest = Exclude<FromAdmin, AdminLifecycle>;

export interface AdminRequestsDeps {
  context: ServerContext;
  runtime: RuntimeLayers;
  profiling: TreeProfiling;
  drains: DrainPlan;
  statsRelay: StatsRelay;
  toWorkers: ToWorkers;
  /** To every worker, without waiting for it. */
  tellWorkers: (m: ToWorker) => void;
  /** To the admin process, if it runs. */
  reply: (m: ToAdmin) => void;
  stop: (exitCode: number) => void;
}

export class AdminRequests {
  /** POST /logging changes so far, replayed to a replacement child after its init. */
  readonly logLevelChanges: LogLevelChange[] = [];

  constructor(private readonly d: AdminRequestsDeps) {}

  handle(m: AdminRequest): void {
    const { context, reply } = this.d;
    const done = (id: number) => () => reply({ type: 'done', id });
    switch (m.type) {
      case 'quit':
        log.info('shutting down on POST /quitquitquit');
        this.d.stop(0);
        break;
      case 'stats_collect':
        this.d.statsRelay.collect(m.id);
        break;
      case 'runtime_modify': {
        let error: { status: number; message: string } | undefined;
        try {
          this.d.runtime.modify(m.overrides);
        } catch (err) {
          if (!(err instanceof RuntimeModifyError)) throw err;
          error = { status: err.status, message: err.message };
        }
        reply({ type: 'runtime_modify_result', id: m.id, ...(error ? { error } : {}) });
        break;
      }
      case 'log_levels':
        applyLogLevelChange(m.change);
        this.logLevelChanges.push(m.change);
        void this.d.toWorkers((ack) => ({ type: 'log_levels', change: m.change, ack })).then(done(m.id));
        break;
      case 'reopen_logs':
        void this.reopenLogs().then(() => m.id !== undefined && reply({ type: 'done', id: m.id }));
        break;
      case 'drain_listeners':
        void this.d.drains.drainListeners(m.inboundOnly ? 'inbound' : 'all', m.graceful, m.skipExit).then(done(m.id));
        break;
      case 'stats_lookups':
        context.statsLookupTracking = m.tracking;
        stats.trackLookups(m.tracking);
        this.d.tellWorkers({ type: 'stats_lookups', tracking: m.tracking });
        break;
      case 'healthcheck':
        context.healthCheckFailing = m.failing;
        reply({ type: 'healthcheck', failing: m.failing });
        void this.d.toWorkers((ack) => ({ type: 'healthcheck', failing: m.failing, ack })).then(done(m.id));
        break;
      case 'profiler':
        void this.d.profiling.profiler(m.kind, m.enable).then((outcomes) => reply({ type: 'profiler_result', id: m.id, outcomes }));
        break;
      case 'heap_dump':
        void this.d.profiling.heapDump(m.process).then((outcome) => reply({ type: 'profiler_result', id: m.id, outcomes: [outcome] }));
        break;
      case 'tap_start':
        context.taps = [...context.taps.filter((t) => t.configId !== m.session.configId), m.session];
        void this.d.toWorkers((ack) => ({ type: 'tap_start', session: m.session, ack })).then(done(m.id));
        break;
      case 'tap_stop':
        context.taps = context.taps.filter((t) => t.id !== m.sessionId);
        this.d.tellWorkers({ type: 'tap_stop', sessionId: m.sessionId });
        break;
    }
  }

  /** Every process reopens its log and access-log files (also on SIGUSR1); resolves once every worker has. */
  async reopenLogs(): Promise<void> {
    reopenLogs();
    this.d.reply({ type: 'reopen_logs' });
    await this.d.toWorkers((ack) => ({ type: 'reopen_logs', ack }));
  }
}
