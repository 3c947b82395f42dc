import type { ChildProcess } from 'node:child_process';
import type { LoadedTls, TlsContext } from './extensions/transport-sockets/tls/context.js';
import type { SecretsDump } from './extensions/transport-sockets/tls/secrets.js';
import type { UpstreamHost } from './upstream/hosts.js';
import type { OutcomeRuns } from './upstream/outcomes.js';
import type { BreakerLayout } from './upstream/breaker-counts.js';
import type { JsonObject } from './config/proto-json.js';
import type { ClusterResource, ListenerResource, RouteResource, UpdateFailure } from './config/resources.js';
import type { LogSettings } from './log/logger.js';
import type { ProfilerKind, ProfilerOrder, ProfilerOutcome } from './profiler.js';
import type { RuntimeSnapshot } from './runtime.js';
import type { StatsDelta } from './stats/store.js';
import type { TapSession } from './tap.js';

/**
 * Every message between a supervisor and its children, in one place. They travel over Node's
 * `fork` IPC channel with `serialization: 'advanced'` (structured clone: BigInt and Maps pass).
 * No process invents a message shape inline.
 */

/** A listener draining after a change or removal (for /config_dump's draining_state). */
export interface DrainingListenerView {
  resource: ListenerResource;
  startedAt: number;
}

/** A drain sequence (/drain_listeners?graceful), as every worker applies it. */
export interface DrainOrder {
  direction: 'all' | 'inbound';
  strategy: 'gradual' | 'immediate';
  drainTimeMs: number;
  /** ms since the epoch, from the supervisor, so every worker follows one clock. */
  startedAt: number;
}

/** What every child needs to know about the server it belongs to. */
export interface ServerContext {
  bootstrap: JsonObject;
  /** The clusters the tree serves, from the supervisor's cluster manager (never read static_resources for them). */
  clusters: ClusterResource[];
  /** New cluster versions warming before they serve (for /config_dump's dynamic_warming_clusters). */
  warmingClusters: ClusterResource[];
  /** The version of the last cluster discovery update accepted whole, if any. */
  cdsVersionInfo?: string;
  /** Clusters whose last update was refused, with why (/config_dump's error_state). */
  clusterFailures: UpdateFailure[];
  /** Route configurations from the route discovery service, by name; `route_update` messages follow every change. */
  routes: Record<string, RouteResource>;
  /** Route configurations whose last update was refused, with why. */
  routeFailures: UpdateFailure[];
  /** The listeners the tree serves (and those stopped by /drain_listeners), from the supervisor's listener manager. */
  listeners: ListenerResource[];
  /** The version of the last listener discovery update accepted whole, if any. */
  ldsVersionInfo?: string;
  /** Listeners whose last update was refused, with why and the refused configuration (/config_dump's error_state). */
  listenerFailures: (UpdateFailure & { failedConfiguration: JsonObject })[];
  /** Listeners draining after a change or removal. */
  drainingListeners: DrainingListenerView[];
  /** New listener versions waiting for their route tables (RDS) before they serve. */
  warmingListeners: ListenerResource[];
  /** A worker's end of its socket channel with the supervisor (shared/socket-channel.ts), on which its regions and listening sockets come; -1 for the admin process. */
  socketChannelFd: number;
  localAddressIpVersion: 'v4' | 'v6';
  restartEpoch: number;
  concurrency: number;
  /** ms since the epoch, when this epoch's supervisor started. */
  startTimeMs: number;
  /** ms since the epoch, when the first epoch started (for uptime_all_epochs). */
  originalStartTimeMs: number;
  logSettings: LogSettingsMessage;
  /** Whether POST /healthcheck/fail is in effect. */
  healthCheckFailing: boolean;
  /** --stats-tag: fixed tags of every statistic (DogStatsD lines carry them). */
  statsTags: [string, string][];
  /** Whether stat-name lookups are being recorded (a replacement worker starts that way too). */
  statsLookupTracking: boolean;
  /** The runtime layers' values when the child starts; `runtime` messages follow every change. */
  runtime: RuntimeSnapshot;
  /** Drains in progress (a replacement worker joins them). */
  drains: DrainOrder[];
  /** --enable-mutex-tracing: every process measures event-loop contention for /contention. */
  enableMutexTracing: boolean;
  /** admin.profile_path, and the profilers running now (a replacement worker starts them too). */
  profilePath: string;
  profilers: ProfilerKind[];
  /** Open /tap sessions (a replacement worker taps too). */
  taps: TapSession[];
  /** The circuit-breaker counts' layout (the region comes on the socket channel as `breakers`; the token buckets' as `buckets`, the heartbeat counters' as `heartbeats`). */
  breakers: { layout: BreakerLayout };
  /** How often a worker's loop moves its watchdog heartbeat counter (shared/heartbeats.ts, supervisor/watchdog.ts). */
  watchdogTickMs: number;
  /** Every cluster's hosts with their health, as the supervisor knows them now; `hosts` messages follow every change. */
  upstream: Record<string, UpstreamHost[]>;
  /** The TLS contexts with their certificates and keys, as the supervisor read them when it loaded the bootstrap. */
  tls: LoadedTls;
  /** The bootstrap's secrets and those from SDS (/config_dump); `secrets` messages follow every change. */
  secrets: SecretsDump;
}

/** The log settings as they travel: LogSettings with the component levels as entries. */
export type LogSettingsMessage = Omit<LogSettings, 'componentLevels'> & { componentLevels: [string, number][] };

// supervisor → worker
export type ToWorker =
  | { type: 'init'; index: number; server: ServerContext }
  | { type: 'healthcheck'; failing: boolean; ack?: number }
  | { type: 'reopen_logs'; ack?: number }
  /** Send `stats` with everything that changed since the last delta (and every gauge, with allGauges). */
  | { type: 'stats_collect'; id: number; allGauges?: boolean }
  /** Record the names of stat lookups (POST /stats/recentlookups/enable), or stop. */
  | { type: 'stats_lookups'; tracking: boolean }
  | { type: 'runtime'; snapshot: RuntimeSnapshot }
  /** A cluster's hosts changed (DNS, health): the whole list. */
  | { type: 'hosts'; cluster: string; hosts: UpstreamHost[] }
  | { type: 'log_levels'; change: LogLevelChange; ack?: number }
  | { type: 'drain'; order: DrainOrder; ack?: number }
  /** A cluster added or changed by the cluster discovery service, with its hosts now (`hosts` messages follow). */
  | { type: 'cluster_upsert'; resource: ClusterResource; hosts: UpstreamHost[] }
  | { type: 'cluster_remove'; name: string }
  /** TLS contexts built again because their SDS secrets came or changed (new connections use them). */
  | { type: 'tls_update'; listeners: { name: string; tls: ListenerResource['tls'] }[]; clusters: { name: string; tls: TlsContext; match?: number }[] }
  /** A route configuration from RDS, new or changed: requests from now on route by it. */
  | { type: 'route_update'; resource: RouteResource }
  /**
   * A listener added or changed by the listener discovery service (its socket, if new, comes on
   * the socket channel): new connections go to it; the previous version's connections drain per
   * `drain` (only those of changed filter chains, `inPlace`).
   */
  | { type: 'listener_upsert'; resource: ListenerResource; inPlace: boolean; drain: DrainOrder }
  /** A listener removed: it stops accepting and its connections drain per `drain`. */
  | { type: 'listener_remove'; name: string; drain: DrainOrder }
  /** The supervisor closed these sockets (no listener uses them): close them here too. */
  | { type: 'sockets_closed'; ids: number[] }
  /** Stop accepting on these listeners (existing connections go on). */
  | { type: 'stop_listeners'; names: string[]; ack?: number }
  /** Start or stop a profiler; the ack carries the ProfilerOutcome. */
  | { type: 'profiler'; order: ProfilerOrder; ack: number }
  /** Write a heap snapshot; the ack carries the ProfilerOutcome (the file). */
  | { type: 'heap_dump'; ack: number }
  | { type: 'tap_start'; session: TapSession; ack: number }
  | { type: 'tap_stop'; sessionId: number }
  | { type: 'shutdown'; graceMs: number };

/** POST /logging, applied by every process to its own loggers. */
export type LogLevelChange =
  | { kind: 'all'; level: number }
  /** Component loggers by name, or (fine-grain mode) source files by path, glob or basename. */
  | { kind: 'some'; levels: [name: string, level: number][] };

// worker → supervisor
export type FromWorker =
  | { type: 'ready'; index: number }
  /** The worker's event loop turned (its watchdog's touch). */
  /** The message carrying `ack` has been applied (with its outcome, for those that have one). */
  | { type: 'ack'; index: number; ack: number; result?: ProfilerOutcome }
  | { type: 'fatal'; index: number; error: string }
  /** The worker's first upstream connection of this cluster (health checks leave no_traffic_interval). */
  | { type: 'cluster_traffic'; cluster: string }
  /** An upstream answered with `x-envoy-immediate-health-check-fail`: its health checker fails it now (passive failure). */
  | { type: 'immediate_hc_fail'; cluster: string; address: string }
  /** Upstream outcomes since the last batch, for the cluster's outlier detector. */
  | { type: 'outcomes'; cluster: string; hosts: [address: string, runs: OutcomeRuns][] }
  | { type: 'stats'; index: number; id: number; delta: StatsDelta }
  /** An exchange matched tap session `sessionId`: its envoy.data.tap.v3.TraceWrapper. */
  | { type: 'tap_trace'; sessionId: number; trace: JsonObject };

// supervisor → admin
export type ToAdmin =
  /** `listenFd`: the admin address's listening socket, bound by the supervisor (supervisor/admin-socket.ts). */
  | { type: 'init'; server: ServerContext; serverInfo: ServerInfoContext; adminAddressPath: string; listenFd: number }
  /** `reason`: why the server is DRAINING (the admin's home page and /hot_restart_status say it). */
  | { type: 'state'; state: ServerState; reason?: DrainReason }
  | { type: 'healthcheck'; failing: boolean }
  | { type: 'reopen_logs' }
  /** Hot restart: the next epoch takes the admin interface; answered with `counters` (the totals so far). */
  | { type: 'hand_back_counters'; id: number }
  /**
   * Deltas from the supervisor and the workers: the answer to `stats_collect` `id`, or (id -1)
   * a worker's answer that came after the collection closed, which is never dropped.
   */
  | { type: 'stats'; id: number; sources: [source: string, delta: StatsDelta][] }
  | { type: 'runtime'; snapshot: RuntimeSnapshot }
  | { type: 'log_levels'; change: LogLevelChange }
  /** Request `id` (healthcheck, drain_listeners) is in effect in every worker. */
  | { type: 'done'; id: number }
  /** The workers not serving yet (starting up, or replacing a crashed one): /init_dump's unready targets. */
  | { type: 'unready'; workers: string[] }
  /** This epoch's hot-restart phase and its parent's, for /hot_restart_status. */
  | { type: 'hot_restart'; status: HotRestartStatus }
  /** The answer to `runtime_modify` `id`: nothing on success, else Envoy's status and message. */
  | { type: 'runtime_modify_result'; id: number; error?: { status: number; message: string } }
  /** The answer to `profiler` / `heap_dump` `id`: what the supervisor and each worker did. */
  | { type: 'profiler_result'; id: number; outcomes: ProfilerOutcome[] }
  | { type: 'tap_trace'; sessionId: number; trace: JsonObject }
  /** The tree's clusters after a cluster discovery update (for /clusters and /config_dump). */
  | { type: 'clusters'; clusters: ClusterResource[]; warming: ClusterResource[]; cdsVersionInfo?: string; failures: UpdateFailure[] }
  /** The listeners after a listener discovery update or a drain (for /listeners and /config_dump). */
  | { type: 'listeners'; listeners: ListenerResource[]; ldsVersionInfo?: string; failures: ServerContext['listenerFailures']; draining: DrainingListenerView[]; warming: ListenerResource[] }
  /** The route configurations from RDS after an update (for /config_dump). */
  | { type: 'routes'; routes: Record<string, RouteResource>; failures: UpdateFailure[] }
  /** The secrets changed, and with them the bootstrap's TLS contexts (/certs). */
  | { type: 'secrets'; secrets: SecretsDump; tls: LoadedTls }
  | { type: 'shutdown'; graceMs: number };

// admin → supervisor
export type FromAdmin =
  | { type: 'ready'; address: string }
  | { type: 'fatal'; error: string }
  | { type: 'quit' }
  | { type: 'healthcheck'; id: number; failing: boolean }
  | { type: 'stats_collect'; id: number }
  /** Every counter's total so far, handed back before a hot-restart child takes the admin interface. */
  | { type: 'counters'; id: number; counters: [name: string, total: number][] }
  | { type: 'stats_lookups'; tracking: boolean }
  | { type: 'runtime_modify'; id: number; overrides: [key: string, value: string][] }
  /** Answered with `done` once every worker uses the new levels. */
  | { type: 'log_levels'; id: number; change: LogLevelChange }
  /** Answered with `done` once every worker has reopened (a script may rotate and then check). */
  | { type: 'reopen_logs'; id?: number }
  | { type: 'drain_listeners'; id: number; inboundOnly: boolean; graceful: boolean; skipExit: boolean }
  | { type: 'profiler'; id: number; kind: ProfilerKind; enable: boolean }
  /** A heap snapshot of `process` (`main` or `worker_<n>`). */
  | { type: 'heap_dump'; id: number; process: string }
  /** Open a /tap session in every worker; answered with `done` once they tap. */
  | { type: 'tap_start'; id: number; session: TapSession }
  | { type: 'tap_stop'; sessionId: number };

export type ServerState = 'PRE_INITIALIZING' | 'INITIALIZING' | 'LIVE' | 'DRAINING';
/** What drains the server: POST /drain_listeners, a newer epoch's hot restart, or its shutdown. */
export type DrainReason = 'drain_listeners' | 'hot_restart' | 'shutdown';

/** What /hot_restart_status shows: where this epoch and its parent are in the restart timeline. */
export interface HotRestartStatus {
  enabled: boolean;
  baseId?: number;
  restartEpoch?: number;
  socketPath?: string;
  phase?: 'initializing' | 'live' | 'draining' | 'terminating';
  /** none: epoch 0 or a regular start; draining: until terminateAtMs; terminated: told to go; gone: stopped answering. */
  parent?: 'none' | 'draining' | 'terminated' | 'gone';
  parentTerminateAtMs?: number;
}

/** What /server_info reports beyond the bootstrap: the version and the effective options. */
export interface ServerInfoContext {
  version: string;
  hotRestartVersion: string;
  commandLineOptions: JsonObject;
  /** The extensions, as /server_info's node lists them (shared/extensions/registry.ts extensionsForNode), disabled ones said so. */
  extensions: JsonObject[];
}

/** Sends a typed message to a child, if its channel is still open. */
export function sendTo<T>(child: ChildProcess, message: T): boolean {
  if (!child.connected) return false;
  // A child can exit between the check and the write (EPIPE). With a callback the failure comes
  // here instead of as an 'error' event, which unhandled would bring the sender down with it.
  child.send(message as never, ignoreSendError);
  return true;
}

function ignoreSendError(): void {
  // The child is gone; its exit is handled where it is observed ('exit').
}

/** Sends a typed message to the parent (the supervisor), if the channel is still open. */
export function sendToParent<T>(message: T): boolean {
  if (!process.send || !process.connected) return false;
  process.send(message as never, undefined, undefined, ignoreSendError);
  return true;
}
