import type { JsonObject } from '../shared/config/proto-json.js';
import { formatDuration } from '../shared/config/wkt.js';
import { levelName } from '../shared/log/levels.js';
import type { Options } from './options.js';

/**
 * The effective options as `/server_info` prints them (envoy.admin.v3.CommandLineOptions, all
 * fields, in field order): 64-bit `base_id` as a string, durations as "600s", enums by name.
 * `hot_restart_version` is the seed's field (whether --hot-restart-version was given: never, in
 * a running server). Fields of options this proxy does not take keep their defaults.
 */
export function commandLineOptionsJson(o: Options): JsonObject {
  const seconds = (s: number) => formatDuration(Math.floor(s), Math.round((s % 1) * 1e9));
  return {
    base_id: String(o.baseId),
    concurrency: o.concurrency,
    config_path: o.configPath,
    config_yaml: o.configYaml,
    allow_unknown_static_fields: o.allowUnknownStaticFields,
    admin_address_path: o.adminAddressPath,
    local_address_ip_version: o.localAddressIpVersion,
    log_level: levelName(o.logLevel),
    component_log_level: o.componentLogLevel,
    log_format: o.logFormat,
    log_path: o.logPath,
    hot_restart_version: false,
    service_cluster: o.serviceCluster,
    service_node: o.serviceNode,
    service_zone: o.serviceZone,
    file_flush_interval: seconds(o.fileFlushIntervalMsec / 1000),
    drain_time: seconds(o.drainTimeS),
    parent_shutdown_time: seconds(o.parentShutdownTimeS),
    mode: o.mode === 'serve' ? 'Serve' : 'Validate',
    disable_hot_restart: o.disableHotRestart,
    enable_mutex_tracing: o.enableMutexTracing,
    restart_epoch: o.restartEpoch,
    cpuset_threads: o.cpusetThreads,
    reject_unknown_dynamic_fields: o.rejectUnknownDynamicFields,
    log_format_escaped: o.logFormatEscaped,
    disabled_extensions: o.disableExtensions,
    ignore_unknown_dynamic_fields: o.ignoreUnknownDynamicFields,
    use_dynamic_base_id: o.useDynamicBaseId,
    base_id_path: o.baseIdPath,
    drain_strategy: o.drainStrategy === 'gradual' ? 'Gradual' : 'Immediate',
    enable_fine_grain_logging: o.enableFineGrainLogging,
    socket_path: o.socketPath,
    socket_mode: o.socketMode,
    enable_core_dump: false,
    stats_tag: o.statsTags.map(([name, value]) => `${name}:${value}`),
    skip_hot_restart_on_no_parent: false,
    skip_hot_restart_parent_stats: false,
  };
}
