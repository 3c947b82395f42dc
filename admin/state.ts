import type { DrainReason, FromAdmin, HotRestartStatus, ServerContext, ServerInfoContext, ServerState } from '../shared/ipc.js';

/** What the admin process knows of the server, kept current by the supervisor's messages. */
export class AdminState {
  state: ServerState = 'PRE_INITIALIZING';
  healthCheckFailing = false;
  /** Workers not serving their listeners yet (see /init_dump). */
  unreadyWorkers: string[] = [];
  /** Where this epoch is in a hot restart (see /hot_restart_status). */
  hotRestart: HotRestartStatus = { enabled: false };
  /** What has drained the server so far (a drain is not undone). */
  readonly drainReasons = new Set<DrainReason>();

  constructor(
    readonly server: ServerContext,
    readonly info: ServerInfoContext,
    /** Tells the supervisor something (quit, health-check changes …). */
    readonly notify: (message: FromAdmin) => void,
  ) {
    this.healthCheckFailing = server.healthCheckFailing;
  }

  /** Why the server reports DRAINING, in the order they came (`healthcheck_fail` while health checks are failed); none otherwise. */
  get drainingBecause(): string[] {
    if (this.reportedState !== 'DRAINING') return [];
    return [...(this.healthCheckFailing ? ['healthcheck_fail'] : []), ...(this.state === 'DRAINING' ? this.drainReasons : [])];
  }

  /** The state as reported: DRAINING while health checks are failed, as Envoy reports it. */
  get reportedState(): ServerState {
    return this.state === 'LIVE' && this.healthCheckFailing ? 'DRAINING' : this.state;
  }
}
