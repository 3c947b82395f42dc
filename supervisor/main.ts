import { stats } from '../shared/stats/process.js';
import { openStatsdSinks, sendHistogramSamples } from '../shared/extensions/stat-sinks/statsd/statsd.js';
import { configureTags } from '../shared/stats/tags.js';
import { closeSync, openSync } from 'node:fs';
import { watchProcess } from './process-watch.js';
import { bootstrapAccessLogPaths } from '../shared/access-log/loggers.js';
import { BootstrapError, bootstrapSources, loadBootstrap, readBootstrap, type LoadedBootstrap } from '../shared/config/bootstrap.js';
import type { JsonObject } from '../shared/config/proto-json.js';
import type { LogSettingsMessage } from '../shared/ipc.js';
import { configureLogging, flushLogs, getLogger, reopenLogs, setLogRole } from '../shared/log/logger.js';
import { idleHousekeeping } from '../shared/idle-housekeeping.js';
import { hotRestartVersion, versionString } from '../shared/version.js';
import { HotRestartEpoch } from './hot-restart/epoch.js';
import { HotRestartError } from './hot-restart/shared-memory.js';
import { ListenerBindError, ListenSockets } from './listen-sockets.js';
import { ListenerManager } from './listener-manager.js';
import { BucketRegion } from './ratelimit/bucket-region.js';
import { readWithoutOptimising } from './optimising-compiler.js';
import { parseOptions, type Options } from './options.js';
import { sdNotify } from './sd-notify.js';
import { discardSpareWorkers, forkSpareWorkers } from './spares.js';
import { ProcessTree } from './tree.js';
import { AdminBindError, AdminSocket } from './admin-socket.js';
import { luaLoadErrors } from '../shared/lua/load-check.js';
import { obj } from '../shared/config/access.js';

/**
 * The supervisor's lifecycle, top to bottom: parse the command line, set up logging, load and
 * validate the bootstrap, then either report (`--mode validate`) or serve: bind the listening
 * sockets, fork the admin process and the workers, and wait until the tree stops (SIGTERM,
 * SIGINT, POST /quitquitquit, or a child that cannot start).
 */

const log = getLogger('main', import.meta.url);

export interface MainIo {
  argv0: string;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: NodeJS.ProcessEnv;
}

const defaultIo: MainIo = {
  argv0: (process.argv[1]?.split('/').pop() ?? 'proxy').replace(/\.js$/, ''),
  stdout: (t) => process.stdout.write(t),
  stderr: (t) => process.stderr.write(t),
  env: process.env,
};

function logSettings(options: Options): LogSettingsMessage {
  return {
    level: options.logLevel,
    componentLevels: [...options.componentLevels],
    format: options.logFormat,
    prefixWithLocation: options.logFormatPrefixWithLocation,
    escape: options.logFormatEscaped,
    fineGrain: options.enableFineGrainLogging,
    path: options.logPath,
    flushIntervalMs: options.fileFlushIntervalMsec,
  };
}

/** Opens (creating) every access-log file once, as Envoy does at start-up; the first failure is fatal. */
function openAccessLogs(bootstrap: JsonObject): string | undefined {
  for (const path of bootstrapAccessLogPaths(bootstrap)) {
    try {
      closeSync(openSync(path, 'a'));
    } catch (err) {
      return `unable to open access log file '${path}': ${(err as Error).message}`;
    }
  }
  return undefined;
}

/**
 * Started by proxy-hot-restarter: stop if it dies, however it dies (Envoy's epochs get SIGTERM
 * through PR_SET_PDEATHSIG; Node has no prctl, so the restarter's pid is watched).
 */
function watchRestarter(stop: () => void): void {
  const pid = Number(process.env.PROXY_RESTARTER_PID);
  if (!Number.isInteger(pid) || pid <= 0) return;
  watchProcess(pid, 1000, () => {
    log.warn(`the hot restarter (pid ${pid}) is gone: shutting down`);
    stop();
  });
}

/** This epoch's part in hot restart; null (said why) when it cannot have one. */
function establishEpoch(options: Options): HotRestartEpoch | null {
  try {
    return HotRestartEpoch.establish(options, Date.now());
  } catch (err) {
    if (!(err instanceof HotRestartError)) throw err;
    log.critical(err.message);
    return null;
  }
}

/** `established`: the epoch, when it was established before the configuration was loaded. */
async function serve(options: Options, loaded: LoadedBootstrap, established: HotRestartEpoch | undefined): Promise<number> {
  // The supervisor's histogram samples (initialization_time_ms, cluster updates) go to the statsd sinks as it records them.
  configureTags(options.statsTags, obj(loaded.bootstrap.stats_config));
  sendHistogramSamples(stats, openStatsdSinks(loaded.bootstrap));
  const accessLogError = openAccessLogs(loaded.bootstrap);
  if (accessLogError) {
    established?.close();
    log.critical(`error initializing configuration '${options.configPath}': ${accessLogError}`);
    return 1;
  }
  let epoch = established;
  if (!epoch && !options.disableHotRestart) {
    const ours = establishEpoch(options);
    if (!ours) return 1;
    epoch = ours;
  }
  // The parent lets go of the admin interface first, then hands over each listener's socket.
  const parent = await epoch?.parent.shutdownAdmin();
  const sockets = new ListenSockets(options.concurrency, epoch?.parent.inherit);
  const buckets = new BucketRegion();
  const listeners = new ListenerManager(sockets, () => ({ direction: 'all', strategy: options.drainStrategy, drainTimeMs: options.drainTimeS * 1000, startedAt: Date.now() }), buckets);
  let adminSocket: AdminSocket | undefined;
  try {
    await listeners.addStatic(loaded.bootstrap, loaded.listenerNames, loaded.tls);
    adminSocket = AdminSocket.bind(loaded.bootstrap);
  } catch (err) {
    epoch?.close();
    buckets.close();
    if (!(err instanceof ListenerBindError) && !(err instanceof AdminBindError)) throw err;
    log.critical(`error initializing configuration '${options.configPath}': ${err.message}`);
    return 1;
  }
  const tree = new ProcessTree(options, loaded, listeners, sockets, logSettings(options), buckets, adminSocket);
  idleHousekeeping();
  if (parent) tree.inheritFromParent(parent.originalStartTimeMs, parent.parentGeneration);
  epoch?.attach(tree, listeners, loaded.handOver);
  process.removeListener('SIGUSR1', reopenLogs);
  process.on('SIGUSR1', () => void tree.reopenLogs());
  process.on('SIGHUP', () => log.info('SIGHUP ignored (as Envoy does); use a hot restart to reload'));
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      log.warn(`caught ${signal}: shutting down`);
      // As Envoy: a stopping child takes its draining parent with it (one not yet told to drain serves on).
      void (epoch?.stopping() ?? Promise.resolve()).finally(() => tree.stop(0));
    });
  }
  log.info(`starting epoch ${options.restartEpoch}: ${options.concurrency} worker(s), listeners ${listeners.listeners.map((l) => `${l.name}=${l.address}`).join(', ') || '(none)'}`);
  watchRestarter(() => void (epoch?.parent.terminate() ?? Promise.resolve()).finally(() => tree.stop(0)));
  tree.start();
  void tree.live.then(() =>
    sdNotify({ READY: 1, STATUS: `epoch ${options.restartEpoch} serving ${listeners.listeners.filter((l) => !l.stopped).length} listener(s)`, PROXY_EPOCH: options.restartEpoch, PROXY_PID: process.pid }),
  );
  const code = await tree.done;
  sdNotify({ STOPPING: 1, STATUS: `epoch ${options.restartEpoch} exiting with status ${code}`, PROXY_EPOCH: options.restartEpoch, PROXY_PID: process.pid });
  epoch?.close();
  log.info(`exiting with status ${code}`);
  return code;
}

/** With `epoch` (a hot restart's new epoch), its parent is asked to read the sources first. */
async function loadConfiguration(options: Options, epoch: HotRestartEpoch | undefined): Promise<LoadedBootstrap | undefined> {
  try {
    const sources = bootstrapSources(options);
    const loaded = loadBootstrap(options, sources, await epoch?.parent.configuration(sources), (s) => readWithoutOptimising(s, () => readBootstrap(s)));
    // As Envoy: a Lua script that does not load (syntax, a require() that finds nothing) refuses the configuration.
    const luaErrors = await luaLoadErrors(loaded.bootstrap, 'bootstrap');
    if (luaErrors.length) throw new BootstrapError(luaErrors);
    return loaded;
  } catch (err) {
    if (!(err instanceof BootstrapError)) {
      // A reader's bug rather than the file's fault; the configuration is still unusable. One line
      // and exit 1, as for any other configuration error, never a crash with a stack trace.
      log.critical(`error initializing configuration '${options.configPath}': unexpected error while reading it (a bug; please report it with the file): ${(err as Error).message}`);
      return undefined;
    }
    for (const e of err.errors) log.critical(`error initializing configuration '${options.configPath}': ${e}`);
    return undefined;
  }
}

/** Runs the proxy; resolves to the process exit status. */
export async function main(args: string[] = process.argv.slice(2), io: MainIo = defaultIo): Promise<number> {
  const parsed = parseOptions(args, { argv0: io.argv0, env: io.env, version: versionString, hotRestartVersion });
  if (parsed.kind === 'exit') {
    if (parsed.stdout) io.stdout(parsed.stdout);
    if (parsed.stderr) io.stderr(parsed.stderr);
    return parsed.code;
  }
  const { options } = parsed;
  setLogRole('main');
  try {
    const settings = logSettings(options);
    configureLogging({ ...settings, componentLevels: options.componentLevels });
  } catch (err) {
    io.stderr(`error: cannot open --log-path '${options.logPath}': ${(err as Error).message}\n`);
    return 1;
  }
  process.on('SIGUSR1', reopenLogs);
  for (const w of parsed.warnings) log.warn(w);
  // The workers boot while the configuration loads (see spares.ts); those not taken die with this function.
  if (options.mode === 'serve') forkSpareWorkers(Array.from({ length: options.concurrency }, (_, i) => `worker_${i}`));
  try {
    return await loadAndRun(options, io);
  } finally {
    discardSpareWorkers();
  }
}

async function loadAndRun(options: Options, io: MainIo): Promise<number> {
  // A hot restart's new epoch is established first, so that its parent, whose API schema is
  // loaded, can read the configuration for it (loading the schema is most of a start otherwise:
  // hot-restart/configuration.ts). Epoch 0 has no parent to ask: it is established once its
  // configuration is known to be good.
  let epoch: HotRestartEpoch | undefined;
  if (options.mode === 'serve' && !options.disableHotRestart && options.restartEpoch > 0) {
    const established = establishEpoch(options);
    if (!established) {
      flushLogs();
      return 1;
    }
    epoch = established;
  }
  const loaded = await loadConfiguration(options, epoch);
  if (!loaded) {
    epoch?.close();
    flushLogs();
    return 1;
  }
  for (const w of loaded.warnings) log.warn(w);
  // runtime.deprecated_feature_use: each deprecated field the configuration uses, as Envoy counts them.
  const deprecatedUses = loaded.warnings.filter((w) => w.includes(': using deprecated option ')).length;
  stats.counter('runtime.deprecated_feature_use').inc(deprecatedUses);
  stats.gauge('runtime.deprecated_feature_seen_since_process_start', 'local').set(deprecatedUses);

  if (options.mode === 'validate') {
    io.stdout(`configuration '${options.configPath}' OK\n`);
    flushLogs();
    return 0;
  }
  const code = await serve(options, loaded, epoch);
  flushLogs();
  return code;
}
