import { cryptoModule } from '../shared/builtins.js';
import type { ServerState } from '../shared/ipc.js';
import { stats } from '../shared/stats/process.js';
import { reportProcessMemory } from '../shared/stats/scopes.js';
import { daysUntil, firstCertExpiry } from '../shared/extensions/transport-sockets/tls/certificates.js';
import type { LoadedTls } from '../shared/extensions/transport-sockets/tls/context.js';
import { presentAtZero } from '../shared/stats/always-present.js';

/** The `server.*` figures only the supervisor knows, refreshed before each of its deltas. */

const STATE_NUMBERS: Record<ServerState, number> = { LIVE: 0, DRAINING: 1, PRE_INITIALIZING: 2, INITIALIZING: 3 };

export class ServerStats {
  private readonly live = stats.gauge('server.live', 'local');
  private readonly state = stats.gauge('server.state', 'local');
  private readonly uptime = stats.gauge('server.uptime', 'local');
  private readonly initializationTime = stats.histogram('server.initialization_time_ms');
  private readonly generation = stats.gauge('server.hot_restart_generation', 'local');
  private readonly daysUntilFirstCertExpiring = stats.gauge('server.days_until_first_cert_expiring', 'local');
  /** Of every loaded certificate and CA (0 days without any, as Envoy reports). */
  private readonly firstCertExpiry: number | undefined;
  /** server.uptime counts from the first epoch's start, as Envoy's does. */
  private uptimeFromMs: number;

  constructor(
    private readonly startTimeMs: number,
    concurrency: number,
    restartEpoch: number,
    version: string,
    staticUnknownFields: number,
    tls: LoadedTls,
  ) {
    presentAtZero('server', 'server.');
    this.firstCertExpiry = firstCertExpiry(tls);
    stats.gauge('server.concurrency', 'local').set(concurrency);
    stats.gauge('server.hot_restart_epoch', 'local').set(restartEpoch);
    // One per epoch in the chain: 1 without a parent; a hot-restart child learns its parent's.
    this.generation.set(1);
    this.uptimeFromMs = startTimeMs;
    stats.gauge('server.parent_connections', 'local').set(0);
    // Envoy's server.version: the first six hex digits of the source revision, as a number.
    stats.gauge('server.version', 'local').set(parseInt(version.slice(0, 6), 16) || 0);
    stats.counter('server.static_unknown_fields').inc(staticUnknownFields);
    stats.counter('server.dynamic_unknown_fields');
    // A release build's: assertions and ENVOY_BUG are not compiled in here either (they stay 0).
    stats.counter('server.debug_assertion_failures');
    stats.counter('server.envoy_bug_failures');
    stats.counter('server.envoy_notifications');
    stats.gauge('server.compilation_settings.fips_mode', 'local').set(cryptoModule().getFips() === 1 ? 1 : 0);
  }

  get hotRestartGeneration(): number {
    return this.generation.value;
  }

  inheritFromParent(originalStartTimeMs: number, parentGeneration: number): void {
    this.uptimeFromMs = originalStartTimeMs;
    this.generation.set(parentGeneration + 1);
  }

  becameLive(): void {
    this.initializationTime.record(Date.now() - this.startTimeMs);
  }

  refresh(state: ServerState, healthCheckFailing: boolean): void {
    const reported = state === 'LIVE' && healthCheckFailing ? 'DRAINING' : state;
    this.state.set(STATE_NUMBERS[reported]);
    this.live.set(reported === 'LIVE' ? 1 : 0);
    this.uptime.set(Math.floor((Date.now() - this.uptimeFromMs) / 1000));
    this.daysUntilFirstCertExpiring.set(this.firstCertExpiry === undefined ? 0 : daysUntil(this.firstCertExpiry, Date.now()));
    reportProcessMemory();
  }
}
