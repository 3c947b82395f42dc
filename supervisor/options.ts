import { availableParallelism, cpus } from 'node:os';
import { parseArgs } from 'node:util';
import { DEFAULT_LOG_FORMAT } from '../shared/log/format.js';
import { COMPONENTS, isComponent, Level, parseLevel } from '../shared/log/levels.js';

/**
 * The command line, Envoy's (seed §2.9): every option with its default, value checks and the
 * validation order and messages of Envoy's options parser. Differences from Envoy, on purpose:
 * `--opt=value` is accepted as well as `--opt value`; `--drain-strategy` errors show the bad
 * strategy (Envoy shows the `--mode` value there, a bug); `--mode init_only` is refused by name.
 * `--socket-mode` with an abstract `--socket-path` is ignored with a warning, as Envoy ignores it.
 * One option is this proxy's own: `--hot-restart-trust-root` (Envoy trusts every local user).
 */

type Kind = 'string' | 'uint32' | 'switch';

interface OptionSpec {
  name: string;
  short?: string;
  kind: Kind;
  help: string;
  /** May be given more than once (--stats-tag). */
  multi?: boolean;
}

export const DEFAULT_SOCKET_PATH = '@proxy_domain_socket';

const LEVELS_HELP = `Log levels: [trace][debug][info][warning|warn][error][critical][off]. Default is [info]`;

export const OPTION_SPECS: readonly OptionSpec[] = [
  { name: 'stats-tag', kind: 'string', multi: true, help: 'Adds a fixed tag name:value to every statistic (a Prometheus label). May be repeated.' },
  { name: 'config-path', short: 'c', kind: 'string', help: 'Path to the bootstrap file (.json, .yaml/.yml, .pb binary proto3, .pb_text text proto3).' },
  { name: 'config-yaml', kind: 'string', help: 'Bootstrap as a YAML (or JSON) string; merged over --config-path with protobuf merge semantics.' },
  { name: 'bootstrap-version', kind: 'uint32', help: 'API version of the bootstrap (2 or 3). Unset: v2 constructs are upgraded to v3 where found.' },
  { name: 'mode', kind: 'string', help: "One of 'serve' (default; validate the configuration, then serve) or 'validate' (validate, print OK or the errors, and exit)." },
  { name: 'admin-address-path', kind: 'string', help: 'File to which the bound admin address and port are written.' },
  { name: 'local-address-ip-version', kind: 'string', help: "IP version of the server's local address ('v4' or 'v6'; default 'v4'), used for the appended X-Forwarded-For entry." },
  { name: 'base-id', kind: 'uint32', help: 'Base ID of the hot-restart shared memory and domain sockets; unique per proxy on one machine (default 0).' },
  { name: 'use-dynamic-base-id', kind: 'switch', help: 'Select an unused base ID (supersedes --base-id). Not with a non-zero --restart-epoch.' },
  { name: 'base-id-path', kind: 'string', help: 'File to which the base ID is written (use with --use-dynamic-base-id).' },
  { name: 'concurrency', kind: 'uint32', help: 'Number of worker processes (default: the number of hardware threads; 0 runs one).' },
  { name: 'cpuset-threads', kind: 'switch', help: 'Without --concurrency, size the workers from the CPU affinity set instead of the hardware thread count.' },
  { name: 'log-level', short: 'l', kind: 'string', help: LEVELS_HELP },
  { name: 'component-log-level', kind: 'string', help: `Comma-separated <component>:<level> pairs, e.g. upstream:debug,config:trace. Components: ${COMPONENTS.join(', ')}.` },
  { name: 'log-format', kind: 'string', help: `Log line format (spdlog flags; %t is the process role: main, worker_N, admin). Default is [${DEFAULT_LOG_FORMAT}]` },
  { name: 'log-format-prefix-with-location', kind: 'string', help: "Deprecated migration flag (1 or 0): replace every %v in the format with '[%g:%#] %v'." },
  { name: 'log-format-escaped', kind: 'switch', help: 'Escape C-style escape sequences in log messages so that one entry never spans several lines.' },
  { name: 'enable-fine-grain-logging', kind: 'switch', help: 'One logger per source file, with levels set per file through POST /logging. Not with --component-log-level.' },
  { name: 'log-path', kind: 'string', help: 'Log file (default stderr); reopened on SIGUSR1.' },
  { name: 'restart-epoch', kind: 'uint32', help: 'Hot restart epoch (default 0, or the RESTART_EPOCH environment variable when this option is absent).' },
  { name: 'hot-restart-version', kind: 'switch', help: 'Print the hot restart compatibility version and exit.' },
  { name: 'service-cluster', kind: 'string', help: "Local service cluster name; overrides the bootstrap's node.cluster." },
  { name: 'service-node', kind: 'string', help: "Local service node name; overrides the bootstrap's node.id." },
  { name: 'service-zone', kind: 'string', help: "Local service zone; overrides the bootstrap's node.locality.zone." },
  { name: 'file-flush-interval-msec', kind: 'uint32', help: 'Interval of file buffer flushes in milliseconds (default 10000); a full buffer flushes at once.' },
  { name: 'drain-time-s', kind: 'uint32', help: 'Connection drain time in seconds during hot restart and listener drains (default 600).' },
  { name: 'drain-strategy', kind: 'string', help: "'gradual' (default: the share of connections told to close rises to 100% over the drain time) or 'immediate'." },
  { name: 'parent-shutdown-time-s', kind: 'uint32', help: 'Seconds after which a hot-restarted process shuts its parent down (default 900).' },
  { name: 'disable-hot-restart', kind: 'switch', help: 'Disable hot restart.' },
  { name: 'enable-mutex-tracing', kind: 'switch', help: 'Collect contention statistics for GET /contention.' },
  { name: 'allow-unknown-static-fields', kind: 'switch', help: 'Warn about (and count) unknown fields in the bootstrap instead of rejecting them.' },
  { name: 'allow-unknown-fields', kind: 'switch', help: 'Deprecated alias of --allow-unknown-static-fields.' },
  { name: 'reject-unknown-dynamic-fields', kind: 'switch', help: 'Reject unknown fields in dynamic configuration.' },
  { name: 'ignore-unknown-dynamic-fields', kind: 'switch', help: 'Ignore unknown fields in dynamic configuration without warning or counting them.' },
  { name: 'disable-extensions', kind: 'string', help: 'Comma-separated <category>/<name> extensions that configuration may not use.' },
  { name: 'socket-path', kind: 'string', help: `Hot restart domain socket path (default ${DEFAULT_SOCKET_PATH}; a leading @ is the abstract namespace).` },
  { name: 'socket-mode', kind: 'string', help: 'Octal file mode of a file-system hot restart socket (default 600). Not with an abstract --socket-path.' },
  { name: 'hot-restart-trust-root', kind: 'switch', help: "This proxy's addition: also take hot-restart messages from processes running as root when the proxy runs as another user (by default only the proxy's own user is trusted)." },
  { name: 'version', kind: 'switch', help: 'Print version information and exit.' },
  { name: 'help', short: 'h', kind: 'switch', help: 'Print this usage and exit.' },
];

const specByName = new Map(OPTION_SPECS.map((s) => [s.name, s]));

export type Mode = 'serve' | 'validate';
export type DrainStrategy = 'gradual' | 'immediate';

export interface Options {
  configPath: string;
  configYaml: string;
  bootstrapVersion: number | undefined;
  mode: Mode;
  adminAddressPath: string;
  localAddressIpVersion: 'v4' | 'v6';
  baseId: number;
  useDynamicBaseId: boolean;
  baseIdPath: string;
  /** Effective worker count (at least 1). */
  concurrency: number;
  cpusetThreads: boolean;
  logLevel: number;
  componentLogLevel: string;
  componentLevels: Map<string, number>;
  logFormat: string;
  logFormatPrefixWithLocation: boolean;
  logFormatEscaped: boolean;
  enableFineGrainLogging: boolean;
  logPath: string;
  restartEpoch: number;
  serviceCluster: string;
  serviceNode: string;
  serviceZone: string;
  fileFlushIntervalMsec: number;
  drainTimeS: number;
  drainStrategy: DrainStrategy;
  parentShutdownTimeS: number;
  disableHotRestart: boolean;
  enableMutexTracing: boolean;
  allowUnknownStaticFields: boolean;
  rejectUnknownDynamicFields: boolean;
  ignoreUnknownDynamicFields: boolean;
  disableExtensions: string[];
  socketPath: string;
  /** Numeric file mode; 0 for an abstract socket (as Envoy reports it). */
  socketMode: number;
  /** Root's hot-restart datagrams are taken too (the proxy's own uid always is). */
  hotRestartTrustRoot: boolean;
  /** --stats-tag: fixed tags every statistic carries. */
  statsTags: [string, string][];
}

/**
 * Why the command line was refused, for a test or a tool to match (the text on stderr is Envoy's
 * layout, which wrapper scripts read): which option, and what kind of error.
 */
export type OptionErrorCode =
  /** An argument that names no option. */
  | 'unknown_option'
  /** An option that takes a value, given none; or a switch given one. */
  | 'missing_value'
  | 'unexpected_value'
  /** An option given twice that takes one value. */
  | 'repeated_option'
  /** A value the option does not take. */
  | 'invalid_value'
  /** Options that cannot go together. */
  | 'conflict'
  /** A value Envoy takes that this proxy does not implement. */
  | 'unsupported';

export interface OptionError {
  readonly code: OptionErrorCode;
  /** The option's long name (`log-level`), or for an unknown one the argument as given. */
  readonly option: string;
}

export type ParseOutcome =
  | { kind: 'run'; options: Options; warnings: string[] }
  | { kind: 'exit'; code: number; stdout: string; stderr: string; error?: OptionError };

export interface Environment {
  argv0: string;
  env: NodeJS.ProcessEnv;
  version: () => string;
  hotRestartVersion: (disabled: boolean) => string;
}

function valueName(kind: Kind): string {
  return kind === 'uint32' ? '<uint32_t>' : '<string>';
}

function briefUsage(argv0: string): string {
  const parts = OPTION_SPECS.filter((s) => s.name !== 'help' && s.name !== 'version').map((s) =>
    s.kind === 'switch' ? `[--${s.name}]` : `[${s.short ? `-${s.short}` : `--${s.name}`} ${valueName(s.kind)}]${s.multi ? ' ...' : ''}`,
  );
  const prefix = `   ${argv0}  `;
  const lines: string[] = [];
  let line = prefix;
  for (const part of [...parts, '[--]', '[--version]', '[-h]']) {
    if (line.length > prefix.length && line.length + part.length + 1 > 80) {
      lines.push(line.trimEnd());
      line = ' '.repeat(prefix.length);
    }
    line += part + ' ';
  }
  lines.push(line.trimEnd());
  return lines.join('\n');
}

function wrap(text: string, indent: number, width = 80): string {
  const words = text.split(/\s+/);
  const lines: string[] = [];
  let line = '';
  for (const w of words) {
    if (line && indent + line.length + 1 + w.length > width) {
      lines.push(line);
      line = w;
    } else {
      line = line ? `${line} ${w}` : w;
    }
  }
  if (line) lines.push(line);
  return lines.map((l) => ' '.repeat(indent) + l).join('\n');
}

export function helpText(argv0: string): string {
  let out = `\nUSAGE: \n\n${briefUsage(argv0)}\n\n\nWhere: \n\n`;
  for (const s of OPTION_SPECS) {
    const value = s.kind === 'switch' ? '' : ` ${valueName(s.kind)}`;
    out += s.short ? `   -${s.short}${value},  --${s.name}${value}\n` : `   --${s.name}${value}\n`;
    out += `${wrap(s.help, 5)}\n\n`;
  }
  out += `   --,  --ignore_rest\n${wrap('Ignores the rest of the labeled arguments following this flag.', 5)}\n\n`;
  out += `\n   ${argv0}: an Envoy-compatible proxy (hot restart epoch from RESTART_EPOCH when --restart-epoch is absent)\n`;
  out += `   ${argv0} route-check -c <routes> -t <tests>: Envoy's router_check_tool (${argv0} route-check --help)\n\n`;
  return out;
}

/** A parse error, in the layout of Envoy's parser (TCLAP): stderr, exit status 1. */
function parseError(argv0: string, argId: string, message: string, error: OptionError): ParseOutcome {
  const stderr =
    `PARSE ERROR: Argument: ${argId}\n             ${message}\n\n` +
    `Brief USAGE: \n${briefUsage(argv0)}\n\n` +
    `For complete USAGE and HELP type: \n   ${argv0} --help\n\n` +
    // Envoy then prints the exception's text: wrappers read this last line.
    `${argId} -- ${message}\n`;
  return { kind: 'exit', code: 1, stdout: '', stderr, error };
}

function argId(spec: OptionSpec): string {
  return spec.short ? `-${spec.short} (--${spec.name})` : `(--${spec.name})`;
}

function validationError(code: OptionErrorCode, option: string, message: string): ParseOutcome {
  return { kind: 'exit', code: 1, stdout: '', stderr: `error: ${message}\n`, error: { code, option } };
}

const UINT32_MAX = 4294967295;

function parseUint32(text: string): number | undefined {
  if (!/^\d+$/.test(text)) return undefined;
  const n = Number(text);
  return n <= UINT32_MAX ? n : undefined;
}

/** Number of CPUs in this process's affinity set (Linux cpuset), as `--cpuset-threads` wants. */
export function cpusetSize(): number {
  return availableParallelism();
}

export function hardwareThreads(): number {
  return cpus().length || availableParallelism();
}

export function parseOptions(args: string[], environment: Environment): ParseOutcome {
  const { argv0 } = environment;
  const config: Record<string, { type: 'string' | 'boolean'; short?: string }> = {};
  for (const s of OPTION_SPECS) config[s.name] = { type: s.kind === 'switch' ? 'boolean' : 'string', ...(s.short ? { short: s.short } : {}) };
  const { tokens } = parseArgs({ args, options: config, strict: false, tokens: true, allowPositionals: true });

  const values = new Map<string, string>();
  const multiValues = new Map<string, string[]>();
  const switches = new Set<string>();
  for (const token of tokens) {
    if (token.kind === 'option-terminator') break;
    if (token.kind === 'positional') {
      if (token.value === '--ignore_rest') break;
      return parseError(argv0, token.value, "Couldn't find match for argument", { code: 'unknown_option', option: token.value });
    }
    const spec = specByName.get(token.name);
    if (!spec) return parseError(argv0, token.rawName, "Couldn't find match for argument", { code: 'unknown_option', option: token.rawName });
    if (spec.name === 'help') return { kind: 'exit', code: 0, stdout: helpText(argv0), stderr: '' };
    if (spec.name === 'version') return { kind: 'exit', code: 0, stdout: `\n${argv0}  version: ${environment.version()}\n\n`, stderr: '' };
    if (spec.kind === 'switch') {
      if (token.value !== undefined) return parseError(argv0, argId(spec), `Argument does not take a value (got '${token.value}')`, { code: 'unexpected_value', option: spec.name });
      switches.add(spec.name);
      continue;
    }
    if (token.value === undefined) return parseError(argv0, argId(spec), 'Missing a value for this argument!', { code: 'missing_value', option: spec.name });
    if (spec.multi) {
      multiValues.set(spec.name, [...(multiValues.get(spec.name) ?? []), token.value]);
      continue;
    }
    if (values.has(spec.name)) return parseError(argv0, argId(spec), 'Argument already set!', { code: 'repeated_option', option: spec.name });
    if (spec.kind === 'uint32' && parseUint32(token.value) === undefined) {
      return parseError(argv0, argId(spec), `Couldn't read argument value from string '${token.value}'`, { code: 'invalid_value', option: spec.name });
    }
    values.set(spec.name, token.value);
  }

  const str = (name: string, dflt: string) => values.get(name) ?? dflt;
  const num = (name: string, dflt: number) => (values.has(name) ? parseUint32(values.get(name)!)! : dflt);
  const warnings: string[] = [];

  // Validation, in Envoy's order; the first failure wins.
  let logLevel: number = Level.info;
  if (values.has('log-level')) {
    const parsed = parseLevel(values.get('log-level')!, { allowWarn: true });
    if (parsed === undefined) return validationError('invalid_value', 'log-level', `invalid log level specified '${values.get('log-level')}'`);
    logLevel = parsed;
  }
  const fineGrain = switches.has('enable-fine-grain-logging');
  const componentLogLevel = str('component-log-level', '');
  if (fineGrain && componentLogLevel) return validationError('conflict', 'component-log-level', '--component-log-level will not work with --enable-fine-grain-logging');
  const componentLevels = new Map<string, number>();
  if (componentLogLevel) {
    for (const item of componentLogLevel.split(',')) {
      const pieces = item.split(':');
      if (pieces.length !== 2) return validationError('invalid_value', 'component-log-level', `component log level not correctly specified '${item}'`);
      const [component, levelText] = pieces as [string, string];
      const level = parseLevel(levelText, { allowWarn: true });
      if (level === undefined) return validationError('invalid_value', 'component-log-level', `invalid log level specified '${levelText}'`);
      if (!isComponent(component)) return validationError('invalid_value', 'component-log-level', `invalid component specified '${component}'`);
      componentLevels.set(component, level);
    }
  }
  const mode = str('mode', 'serve');
  if (mode === 'init_only') return validationError('unsupported', 'mode', "mode 'init_only' is not supported by this proxy (serve or validate)");
  if (mode !== 'serve' && mode !== 'validate') return validationError('invalid_value', 'mode', `unknown mode '${mode}'`);
  const ipVersion = str('local-address-ip-version', 'v4');
  if (ipVersion !== 'v4' && ipVersion !== 'v6') return validationError('invalid_value', 'local-address-ip-version', `unknown IP address version '${ipVersion}'`);

  let restartEpoch = num('restart-epoch', 0);
  if (!values.has('restart-epoch') && environment.env.RESTART_EPOCH !== undefined && environment.env.RESTART_EPOCH !== '') {
    const fromEnv = parseUint32(environment.env.RESTART_EPOCH);
    if (fromEnv === undefined) return validationError('invalid_value', 'restart-epoch', `invalid RESTART_EPOCH environment value '${environment.env.RESTART_EPOCH}' (a non-negative integer)`);
    restartEpoch = fromEnv;
  }
  const useDynamicBaseId = switches.has('use-dynamic-base-id');
  if (useDynamicBaseId && restartEpoch > 0) return validationError('conflict', 'use-dynamic-base-id', `cannot use --restart-epoch=${restartEpoch} with --use-dynamic-base-id`);

  const socketPath = str('socket-path', DEFAULT_SOCKET_PATH);
  const abstractSocket = socketPath.startsWith('@');
  let socketMode = 0;
  if (values.has('socket-mode')) {
    const text = values.get('socket-mode')!;
    // As Envoy: with an abstract path the mode means nothing and is ignored (Envoy's own hot-restart test passes one).
    if (abstractSocket) warnings.push(`--socket-mode '${text}' is ignored: the hot restart socket '${socketPath}' is abstract and has no file mode`);
    else if (!/^[0-7]{1,4}$/.test(text)) return validationError('invalid_value', 'socket-mode', `invalid socket-mode '${text}'`);
    else socketMode = parseInt(text, 8);
  } else if (!abstractSocket) {
    socketMode = 0o600;
  }
  const drainStrategy = str('drain-strategy', 'gradual');
  if (drainStrategy !== 'gradual' && drainStrategy !== 'immediate') return validationError('invalid_value', 'drain-strategy', `unknown drain-strategy '${drainStrategy}' (gradual or immediate)`);

  const disableHotRestart = switches.has('disable-hot-restart');
  if (switches.has('hot-restart-version')) {
    // Envoy prints this to stderr without a newline; wrapper scripts compare it verbatim.
    return { kind: 'exit', code: 0, stdout: '', stderr: environment.hotRestartVersion(disableHotRestart) };
  }
  // --stats-tag name:value, as Envoy checks it: the name alphanumeric, the value non-empty and without '.'.
  const statsTags: [string, string][] = [];
  for (const arg of multiValues.get('stats-tag') ?? []) {
    const colon = arg.indexOf(':');
    if (colon < 0) return validationError('invalid_value', 'stats-tag', `misformatted stats-tag '${arg}'`);
    const [name, value] = [arg.slice(0, colon), arg.slice(colon + 1)];
    if (!/^[a-zA-Z0-9]+$/.test(name)) return validationError('invalid_value', 'stats-tag', `misformatted stats-tag '${arg}' contains invalid char in '${name}'`);
    if (value === '' || value.includes('.')) return validationError('invalid_value', 'stats-tag', `misformatted stats-tag '${arg}' contains invalid char in '${value}'`);
    statsTags.push([name, value]);
  }


  let prefixWithLocation = false;
  if (values.has('log-format-prefix-with-location')) {
    const text = values.get('log-format-prefix-with-location')!;
    if (!['1', '0', 'true', 'false'].includes(text)) return validationError('invalid_value', 'log-format-prefix-with-location', `invalid --log-format-prefix-with-location '${text}' (1 or 0)`);
    prefixWithLocation = text === '1' || text === 'true';
    warnings.push('--log-format-prefix-with-location is deprecated: put [%g:%#] in --log-format instead.');
  }
  if (switches.has('allow-unknown-fields')) warnings.push('--allow-unknown-fields is deprecated, use --allow-unknown-static-fields instead.');
  if (values.has('concurrency') && switches.has('cpuset-threads')) warnings.push('Both --concurrency and --cpuset-threads options are set; not applying --cpuset-threads.');

  const concurrency = values.has('concurrency')
    ? Math.max(1, num('concurrency', 1))
    : switches.has('cpuset-threads')
      ? cpusetSize()
      : hardwareThreads();

  const bootstrapVersion = values.has('bootstrap-version') ? num('bootstrap-version', 3) : undefined;
  const configPath = str('config-path', '');
  const configYaml = str('config-yaml', '');

  return {
    kind: 'run',
    warnings,
    options: {
      configPath,
      configYaml,
      bootstrapVersion,
      mode,
      adminAddressPath: str('admin-address-path', ''),
      localAddressIpVersion: ipVersion,
      baseId: num('base-id', 0),
      useDynamicBaseId,
      baseIdPath: str('base-id-path', ''),
      concurrency,
      cpusetThreads: switches.has('cpuset-threads'),
      logLevel,
      componentLogLevel,
      componentLevels,
      logFormat: str('log-format', DEFAULT_LOG_FORMAT),
      logFormatPrefixWithLocation: prefixWithLocation,
      logFormatEscaped: switches.has('log-format-escaped'),
      enableFineGrainLogging: fineGrain,
      logPath: str('log-path', ''),
      restartEpoch,
      serviceCluster: str('service-cluster', ''),
      serviceNode: str('service-node', ''),
      serviceZone: str('service-zone', ''),
      fileFlushIntervalMsec: num('file-flush-interval-msec', 10000),
      drainTimeS: num('drain-time-s', 600),
      drainStrategy,
      parentShutdownTimeS: num('parent-shutdown-time-s', 900),
      disableHotRestart,
      enableMutexTracing: switches.has('enable-mutex-tracing'),
      allowUnknownStaticFields: switches.has('allow-unknown-static-fields') || switches.has('allow-unknown-fields'),
      rejectUnknownDynamicFields: switches.has('reject-unknown-dynamic-fields'),
      ignoreUnknownDynamicFields: switches.has('ignore-unknown-dynamic-fields'),
      disableExtensions: str('disable-extensions', '').split(',').filter((s) => s !== ''),
      socketPath,
      socketMode,
      hotRestartTrustRoot: switches.has('hot-restart-trust-root'),
      statsTags,
    },
  };
}

