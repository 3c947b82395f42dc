import { list, obj } from '../config/access.js';
import type { JsonObject } from '../config/proto-json.js';
import { accessLoggerOf } from '../extensions/access-loggers/lookup.js';
import { accessLogSink } from '../log/logger.js';
import type { LogSink } from '../log/sink.js';
import type { AccessLogEntry } from './entry.js';
import { compileAccessLogFilter, type AccessLogFilter } from './filter.js';
import { compileAccessLogFormat, type LogFormatter } from './format.js';
import { configError, ConfigFault, type ConfigError } from '../config/config-error.js';

/**
 * The `access_log` lists of the HTTP connection manager, the TCP proxy and the admin: each entry
 * an optional filter, a format, and where the lines go (an access logger of
 * shared/extensions/access-loggers/: a file, stdout, stderr). Compiled once; `log()` formats only entries its filter lets through, into a
 * buffered writer, so a request costs a format and an array push.
 */

type Obj = JsonObject;

interface Destination {
  /** '' for stdout / stderr. */
  path: string;
  stdFd: 1 | 2;
}

class AccessLogger {
  constructor(
    private readonly filter: AccessLogFilter | undefined,
    private readonly formatter: LogFormatter,
    private readonly sink: LogSink,
  ) {}

  log(e: AccessLogEntry): void {
    if (this.filter && !this.filter(e)) return;
    this.sink.write(this.formatter.format(e), false);
  }
}

interface Compiled {
  filter: AccessLogFilter | undefined;
  formatter: LogFormatter;
  destination: Destination;
}

function compileOne(entry: Obj): Compiled {
  const typed = obj(entry.typed_config);
  const { logger, typeName } = accessLoggerOf(entry);
  if (typeName === undefined) throw new ConfigFault('missing', `access logger '${String(entry.name ?? '')}' needs a typed_config`);
  if (logger === undefined) throw new ConfigFault('wrong_extension', `typed_config: '${typeName}' is not an access logger`);
  const formatter = compileAccessLogFormat(typed);
  const filter = entry.filter !== undefined ? compileAccessLogFilter(obj(entry.filter)) : undefined;
  return { filter, formatter, destination: logger.destination(typed) };
}

/** Validation: the errors of an `access_log` list, each naming the entry's path. Opens nothing. */
export function checkAccessLogs(entries: unknown, path: string, errors: ConfigError[]): void {
  list(entries).forEach((entry, i) => {
    try {
      compileOne(entry);
    } catch (err) {
      errors.push(configError(err instanceof ConfigFault ? err.code : 'invalid', `${path}[${i}]`, (err as Error).message));
    }
  });
}

/** The files an `access_log` list writes to (the loggers' destinations that have a path). */
function accessLogPaths(entries: unknown): string[] {
  return list(entries).flatMap((e) => {
    const { logger } = accessLoggerOf(e);
    const path = logger?.destination(obj(e.typed_config)).path;
    return path ? [path] : [];
  });
}

/**
 * Every file the bootstrap's access logs write to: the listeners' own, their HTTP connection
 * managers' and TCP proxies', and the admin's. The supervisor opens each before starting, so that a bad path
 * fails the start with its name instead of failing every worker.
 */
export function bootstrapAccessLogPaths(bootstrap: Obj): string[] {
  const paths = list(obj(bootstrap.static_resources).listeners).flatMap(listenerAccessLogPaths);
  const admin = obj(bootstrap.admin);
  paths.push(...accessLogPaths(admin.access_log));
  if (typeof admin.access_log_path === 'string' && admin.access_log_path !== '') paths.push(admin.access_log_path);
  return [...new Set(paths)];
}

/** Every file a listener's HTTP connection managers and TCP proxies write their access logs to. */
export function listenerAccessLogPaths(l: Obj): string[] {
  const chains = [...list(l.filter_chains), ...(l.default_filter_chain ? [obj(l.default_filter_chain)] : [])];
  return [...accessLogPaths(l.access_log), ...chains.flatMap((chain) => list(chain.filters).flatMap((f) => accessLogPaths(obj(f.typed_config).access_log)))];
}

/** The loggers of an `access_log` list; undefined when there are none, so callers skip recording. */
export class AccessLogs {
  private constructor(private readonly loggers: AccessLogger[]) {}

  static from(entries: unknown): AccessLogs | undefined {
    const loggers = list(entries).map((entry) => {
      const c = compileOne(entry);
      return new AccessLogger(c.filter, c.formatter, accessLogSink(c.destination.path, c.destination.stdFd));
    });
    return loggers.length ? new AccessLogs(loggers) : undefined;
  }

  log(e: AccessLogEntry): void {
    for (const l of this.loggers) l.log(e);
  }
}
