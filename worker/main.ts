import { startOverloadManager } from './overload.js';
import type { JsonObject } from '../shared/config/proto-json.js';
import { applyLogSettings, childRole, setUpChild } from '../shared/child.js';
import { sendToParent, type FromWorker, type ServerContext, type ToWorker } from '../shared/ipc.js';
import { startContentionTracing } from '../shared/contention.js';
import { idleHousekeeping } from '../shared/idle-housekeeping.js';
import { Heartbeats } from '../shared/heartbeats.js';
import { applyLogLevelChange, flushLogs, getLogger, reopenLogs } from '../shared/log/logger.js';
import { applyProfilerOrder, heapSnapshotFile, type ProfilerOutcome } from '../shared/profiler.js';
import { setRuntime } from '../shared/runtime.js';
import { stats } from '../shared/stats/process.js';
import { openStatsdSinks, sendHistogramSamples } from '../shared/extensions/stat-sinks/statsd/statsd.js';
import { configureTags } from '../shared/stats/tags.js';
import { reportProcessMemory } from '../shared/stats/scopes.js';
import { DrainManager } from './drain.js';
import { startTap, stopTap } from '../shared/extensions/filters/http/tap/tap.js';
import { ListenerSet } from './listener-set.js';
import { SocketInbox } from '../shared/socket-channel.js';
import { RouteTables } from './http/route-tables.js';
import { ClusterManager } from './upstream/cluster-manager.js';
import { BreakerCounts } from '../shared/upstream/breaker-counts.js';
import { TreeBuckets, useTreeBuckets } from '../shared/ratelimit/token-buckets.js';
import { obj } from '../shared/config/access.js';

/**
 * A worker's lifecycle: wait for `init` from the supervisor, build the clusters (with the hosts
 * the supervisor resolved; `hosts` messages update them), serve every inherited listening socket, report `ready`. On `shutdown`: stop
 * accepting, close idle keep-alive connections, let requests in flight finish within the grace
 * period, exit. A worker never outlives its supervisor (shared/child.ts).
 */

const log = getLogger('main', import.meta.url);
// Node loads node:perf_hooks (nine modules) the first time the `performance` global is read, which
// every connection does: read it now, while a spare worker waits for its configuration, rather
// than as the first connection of a hot restart's new epoch arrives.
performance.now();
let index = -1;
let clusters: ClusterManager | undefined;
let routeTables: RouteTables | undefined;
let listeners: ListenerSet | undefined;
let healthCheckFailing = false;
let stopping = false;
const drain = new DrainManager(() => healthCheckFailing);

async function init(workerIndex: number, server: ServerContext): Promise<void> {
  index = workerIndex;
  applyLogSettings(server.logSettings);
  healthCheckFailing = server.healthCheckFailing;
  stats.trackLookups(server.statsLookupTracking);
  // statsd / DogStatsD: this worker's histogram samples go out as it records them, as Envoy's workers send theirs.
  configureTags(server.statsTags, obj(server.bootstrap.stats_config));
  sendHistogramSamples(stats, openStatsdSinks(server.bootstrap));
  setRuntime(server.runtime);
  startOverloadManager(server.bootstrap);
  if (server.enableMutexTracing) startContentionTracing();
  // A replacement worker joins the profiling in progress.
  for (const kind of server.profilers) void applyProfilerOrder({ kind, enable: true, path: server.profilePath }, childRole());
  for (const session of server.taps) startTap(session);
  // Every descriptor comes on the socket channel (the worker may have been forked before there was any).
  const inbox = new SocketInbox(server.socketChannelFd);
  const [breakerFd, bucketFd, heartbeatFd] = await Promise.all([inbox.takeRegion('breakers'), inbox.takeRegion('buckets'), inbox.takeRegion('heartbeats')]);
  const heartbeats = Heartbeats.open(heartbeatFd, server.concurrency);
  const counts = BreakerCounts.open(breakerFd, server.breakers.layout);
  useTreeBuckets(TreeBuckets.open(bucketFd));
  clusters = new ClusterManager(server.clusters, server.upstream, { counts, worker: workerIndex }, server.tls.clusters);
  for (const order of server.drains) drain.start(order);
  routeTables = new RouteTables(server.routes);
  listeners = new ListenerSet(inbox, {
    drain,
    clusters,
    routeTables,
    healthCheckFailing: () => healthCheckFailing,
    localAddressIpVersion: server.localAddressIpVersion,
    workerIndex,
    node: { id: String((server.bootstrap.node as { id?: unknown } | undefined)?.id ?? ''), cluster: String((server.bootstrap.node as { cluster?: unknown } | undefined)?.cluster ?? '') },
    ...((server.bootstrap.tracing as { http?: JsonObject } | undefined)?.http ? { bootstrapTracing: (server.bootstrap.tracing as { http: JsonObject }).http } : {}),
  });
  await listeners.start(server.listeners);
  log.debug(`${childRole()} serving ${listeners.size} listener(s)`);
  sendToParent<FromWorker>({ type: 'ready', index });
  // The watchdog's touch: a loop that stops turning stops its counter (supervisor/watchdog.ts).
  heartbeats.beatEvery(index, server.watchdogTickMs);
  idleHousekeeping();
}

function stop(graceMs: number): void {
  if (stopping) return;
  stopping = true;
  const exit = () => {
    flushLogs();
    process.exit(0);
  };
  // Requests in flight finish within the grace period; then the process exits regardless.
  setTimeout(exit, graceMs);
  void (listeners?.close() ?? Promise.resolve())
    .then(() => clusters?.close())
    .finally(exit);
}

/** Tells the supervisor a change is in effect here (it answers the admin request only then). */
function acknowledge(ack: number | undefined, result?: ProfilerOutcome): void {
  if (ack !== undefined) sendToParent<FromWorker>({ type: 'ack', index, ack, ...(result ? { result } : {}) });
}

setUpChild(stop);
process.on('message', (m: ToWorker) => {
  switch (m.type) {
    case 'init':
      init(m.index, m.server).catch((err: Error) => {
        log.critical(`${childRole()} failed to start: ${err.message}`);
        sendToParent<FromWorker>({ type: 'fatal', index: m.index, error: err.message });
        flushLogs();
        process.exit(1);
      });
      break;
    case 'healthcheck':
      healthCheckFailing = m.failing;
      acknowledge(m.ack);
      break;
    case 'reopen_logs':
      reopenLogs();
      acknowledge(m.ack);
      break;
    case 'runtime':
      setRuntime(m.snapshot);
      break;
    case 'hosts':
      clusters?.get(m.cluster)?.update(m.hosts);
      break;
    case 'cluster_upsert':
      clusters?.upsert(m.resource, m.hosts);
      break;
    case 'tls_update':
      for (const l of m.listeners) listeners?.updateTls(l.name, l.tls);
      for (const c of m.clusters) clusters?.updateTls(c.name, c.tls, c.match);
      break;
    case 'cluster_remove':
      clusters?.remove(m.name);
      break;
    case 'route_update':
      routeTables?.set(m.resource);
      break;
    case 'log_levels':
      applyLogLevelChange(m.change);
      acknowledge(m.ack);
      break;
    case 'drain':
      drain.start(m.order);
      acknowledge(m.ack);
      break;
    case 'stop_listeners':
      void (listeners?.stopAccepting(m.names) ?? Promise.resolve()).then(() => acknowledge(m.ack));
      break;
    case 'listener_upsert':
      listeners?.upsert(m.resource, m.inPlace, m.drain);
      break;
    case 'listener_remove':
      listeners?.remove(m.name, m.drain);
      break;
    case 'sockets_closed':
      listeners?.closeSockets(m.ids);
      break;
    case 'stats_lookups':
      stats.trackLookups(m.tracking);
      break;
    case 'stats_collect':
      reportProcessMemory();
      if (m.allGauges) stats.touchAllGauges();
      sendToParent<FromWorker>({ type: 'stats', index, id: m.id, delta: stats.takeDelta() });
      break;
    case 'profiler':
      void applyProfilerOrder(m.order, childRole()).then((result) => acknowledge(m.ack, result));
      break;
    case 'heap_dump':
      acknowledge(m.ack, heapSnapshotFile(childRole()));
      break;
    case 'tap_start':
      startTap(m.session);
      acknowledge(m.ack);
      break;
    case 'tap_stop':
      stopTap(m.sessionId);
      break;
    case 'shutdown':
      stop(m.graceMs);
      break;
  }
});
