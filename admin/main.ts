import { configureHistogramBuckets } from './render/histogram-view.js';
import { statsMatcher } from './stats-matcher.js';
import { StatsdSinks } from '../shared/extensions/stat-sinks/statsd/flush.js';
import { openStatsdSinks, sendHistogramSamples } from '../shared/extensions/stat-sinks/statsd/statsd.js';
import { stats } from '../shared/stats/process.js';
import { configureTags } from '../shared/stats/tags.js';
import { writeFileSync } from 'node:fs';
import { formatAddress, isLoopback } from '../shared/address.js';
import { applyLogSettings, setUpChild } from '../shared/child.js';
import { list, obj } from '../shared/config/access.js';
import { compileStringMatcher } from '../shared/matchers.js';
import { sendToParent, type FromAdmin, type ServerContext, type ServerInfoContext, type ToAdmin } from '../shared/ipc.js';
import { startContentionTracing } from '../shared/contention.js';
import { applyProfilerOrder } from '../shared/profiler.js';
import { applyLogLevelChange, flushLogs, getLogger, reopenLogs } from '../shared/log/logger.js';
import { AdminAccessLog } from './access-log.js';
import type { AdminEndpoint } from './endpoint.js';
import { certsEndpoints } from './endpoints/certs.js';
import { clusterEndpoints } from './endpoints/clusters.js';
import { configDumpEndpoints } from './endpoints/config-dump.js';
import { dashboardEndpoints } from './endpoints/dashboard.js';
import { drainEndpoints, healthEndpoints } from './endpoints/health.js';
import { routeExplainEndpoints } from './endpoints/route-explain.js';
import { listenerEndpoints } from './endpoints/listeners.js';
import { configStatusEndpoints } from './endpoints/config-status.js';
import { loggingEndpoints } from './endpoints/logging.js';
import { processEndpoints } from './endpoints/process.js';
import { profilingEndpoints } from './endpoints/profiling.js';
import { runtimeEndpoints } from './endpoints/runtime.js';
import { SupervisorClient } from './supervisor-client.js';
import { setRuntime } from '../shared/runtime.js';
import { idleHousekeeping } from '../shared/idle-housekeeping.js';
import { serverEndpoints } from './endpoints/server.js';
import { statsEndpoints } from './endpoints/stats.js';
import { tapEndpoints, type AdminTap } from './endpoints/tap.js';
import { AdminServer } from './server.js';
import { StatsCollector } from './stats-collector.js';
import { durationMs } from '../shared/config/wkt.js';
import { AdminState } from './state.js';
import { trafficEndpoints } from './endpoints/traffic.js';
import { TrafficHistory } from './traffic-history.js';

/**
 * The admin process's lifecycle: on `init`, bind `admin.address`, write --admin-address-path,
 * report `ready` with the bound address; serve every endpoint; forward mutations to the
 * supervisor; on `shutdown`, close the listener and exit. A slow admin request never touches
 * a worker's event loop.
 */

const log = getLogger('admin', import.meta.url);
let state: AdminState | undefined;
let server: AdminServer | undefined;
let collector: StatsCollector | undefined;
let tap: AdminTap | undefined;
const supervisor = new SupervisorClient((m) => sendToParent<FromAdmin>(m));

async function init(context: ServerContext, info: ServerInfoContext, adminAddressPath: string, listenFd: number): Promise<void> {
  applyLogSettings(context.logSettings);
  setRuntime(context.runtime);
  state = new AdminState(context, info, (m) => sendToParent<FromAdmin>(m));
  const bootstrap = context.bootstrap;
  collector = new StatsCollector(
    (m) => sendToParent<FromAdmin>(m),
    typeof bootstrap.stats_flush_interval === 'string' ? durationMs(bootstrap.stats_flush_interval) : 5000,
    bootstrap.stats_flush_on_admin === true,
  );
  // statsd and DogStatsD sinks: the whole tree's figures, sent at each flush.
  const sinks = new StatsdSinks(bootstrap);
  if (!sinks.empty) collector.onFlush(() => sinks.flush(collector!.merged));
  // The home page's plots: a point at each flush.
  const history = new TrafficHistory(collector.merged, collector.flushIntervalMs);
  collector.onFlush(() => history.sample());
  collector.start();
  const statsConfig = bootstrap.stats_config === undefined ? undefined : obj(bootstrap.stats_config);
  collector.merged.setMatcher(statsMatcher(statsConfig));
  configureHistogramBuckets(statsConfig);
  // Prometheus labels: --stats-tag and stats_config's tags (see render/stats-prometheus.ts).
  configureTags(
    ((info.commandLineOptions.stats_tag as string[] | undefined) ?? []).map((t) => [t.slice(0, t.indexOf(':')), t.slice(t.indexOf(':') + 1)] as [string, string]),
    statsConfig,
  );
  // The admin process's own histogram samples go to the sinks as it records them.
  sendHistogramSamples(stats, openStatsdSinks(bootstrap));
  const endpoints: AdminEndpoint[] = [];
  endpoints.push(...serverEndpoints(state, () => endpoints), ...listenerEndpoints(state), ...routeExplainEndpoints(state), ...configStatusEndpoints(state), ...healthEndpoints(state, supervisor), ...statsEndpoints(collector, state), ...runtimeEndpoints(supervisor),
    ...loggingEndpoints(supervisor), ...processEndpoints(state, collector),
    ...clusterEndpoints(state, collector), ...drainEndpoints(supervisor), ...configDumpEndpoints(state, collector), ...profilingEndpoints(state, supervisor, collector),
    ...certsEndpoints(state), ...trafficEndpoints(history, collector), ...dashboardEndpoints(bootstrap, context.clusters.map((c) => c.config), collector));
  const taps = tapEndpoints(bootstrap, supervisor, (m) => sendToParent<FromAdmin>(m));
  tap = taps.tap;
  endpoints.push(...taps.endpoints);
  if (context.enableMutexTracing) startContentionTracing();
  // A replacement admin process joins the profiling in progress.
  for (const kind of context.profilers) void applyProfilerOrder({ kind, enable: true, path: context.profilePath }, 'admin');
  const admin = obj(context.bootstrap.admin);
  server = new AdminServer(endpoints, AdminAccessLog.from(admin), list(admin.allow_paths).map((m) => compileStringMatcher(m)));
  const host = String(obj(obj(admin.address).socket_address).address);
  let bound: { host: string; port: number };
  try {
    bound = await server.listen(listenFd);
  } catch (err) {
    throw new Error(`cannot listen on the admin address's socket: ${(err as Error).message}`);
  }
  const address = formatAddress(bound.host, bound.port);
  if (adminAddressPath) {
    try {
      writeFileSync(adminAddressPath, address);
    } catch (err) {
      log.critical(`cannot write the admin address to '${adminAddressPath}': ${(err as Error).message}`);
    }
  }
  log.info(`admin address: ${address}`);
  idleHousekeeping();
  if (!isLoopback(host)) {
    // As Envoy's documentation warns: the admin interface can drain, stop and reconfigure the proxy.
    log.warn(`the admin interface listens on ${address}, reachable from other machines: anyone who reaches it can drain, reconfigure or stop the proxy; bind it to 127.0.0.1 (or ::1) unless a firewall stands in front`);
  }
  sendToParent<FromAdmin>({ type: 'ready', address });
}

function stop(): void {
  void (server?.close() ?? Promise.resolve()).finally(() => {
    flushLogs();
    process.exit(0);
  });
}

setUpChild(stop);
process.on('message', (m: ToAdmin) => {
  switch (m.type) {
    case 'init':
      init(m.server, m.serverInfo, m.adminAddressPath, m.listenFd).catch((err: Error) => {
        log.critical(err.message);
        sendToParent<FromAdmin>({ type: 'fatal', error: err.message });
        flushLogs();
        process.exit(1);
      });
      break;
    case 'state':
      if (state) {
        state.state = m.state;
        if (m.reason) state.drainReasons.add(m.reason);
      }
      break;
    case 'unready':
      if (state) state.unreadyWorkers = m.workers;
      break;
    case 'hot_restart':
      if (state) state.hotRestart = m.status;
      break;
    case 'stats':
      collector?.onStats(m);
      break;
    case 'clusters':
      if (state) {
        state.server.clusters = m.clusters;
        state.server.warmingClusters = m.warming;
        state.server.cdsVersionInfo = m.cdsVersionInfo;
        state.server.clusterFailures = m.failures;
      }
      break;
    case 'secrets':
      if (state) {
        state.server.secrets = m.secrets;
        state.server.tls = m.tls;
      }
      break;
    case 'routes':
      if (state) {
        state.server.routes = m.routes;
        state.server.routeFailures = m.failures;
      }
      break;
    case 'listeners':
      if (state) {
        state.server.listeners = m.listeners;
        state.server.ldsVersionInfo = m.ldsVersionInfo;
        state.server.listenerFailures = m.failures;
        state.server.drainingListeners = m.draining;
        state.server.warmingListeners = m.warming;
      }
      break;
    case 'hand_back_counters': {
      // A hot restart's child takes the admin interface over: this one stops serving (its address
      // is free for the child once this answers), hands its counters back, and exits when told.
      const counters = collector?.counterTotals() ?? [];
      void (server?.close() ?? Promise.resolve()).finally(() => sendToParent<FromAdmin>({ type: 'counters', id: m.id, counters }));
      break;
    }
    case 'runtime':
      setRuntime(m.snapshot);
      break;
    case 'log_levels':
      applyLogLevelChange(m.change); // replayed to a replacement admin process
      break;
    case 'tap_trace':
      tap?.onTrace(m.sessionId, m.trace);
      break;
    case 'runtime_modify_result':
    case 'profiler_result':
    case 'done':
      supervisor.onReply(m);
      break;
    case 'healthcheck':
      if (state) state.healthCheckFailing = m.failing;
      break;
    case 'reopen_logs':
      reopenLogs();
      break;
    case 'shutdown':
      stop();
      break;
  }
});
