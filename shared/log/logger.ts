import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleOrigin, isBundle } from '../bundle-sources.js';
import { packageRoot } from '../paths.js';
import { compileFormat, DEFAULT_LOG_FORMAT, type CompiledFormat, type LogRecord } from './format.js';
import { COMPONENTS, Level, levelName, type Component, type LevelName } from './levels.js';
import { stats } from '../stats/process.js';
import { LogSink, type SinkFigures } from './sink.js';

/**
 * The process's log registry, Envoy style: one logger per component (`main`, `upstream`, …)
 * with its own level, or, with `--enable-fine-grain-logging`, one per source file. A disabled
 * level costs one comparison; the caller's line is captured only for lines that are written
 * and only when the format prints it (`%#`, `%@`, `%!`).
 */

export interface LogSettings {
  level: number;
  componentLevels: ReadonlyMap<string, number>;
  format: string;
  prefixWithLocation: boolean;
  escape: boolean;
  fineGrain: boolean;
  path: string;
  flushIntervalMs: number;
}

interface FileLevel {
  pattern: string;
  matcher: RegExp;
  level: number;
}

class Registry {
  role = 'main';
  generation = 0;
  private readonly componentLevels = new Map<string, number>();
  private fileLevels: FileLevel[] = [];
  fineGrain = false;
  defaultLevel: number = Level.info;
  escape = false;
  compiled: CompiledFormat = compileFormat(DEFAULT_LOG_FORMAT);
  sink: LogSink | undefined;
  flushIntervalMs = 10_000;
  readonly files = new Set<string>();

  constructor() {
    for (const c of COMPONENTS) this.componentLevels.set(c, Level.info);
  }

  configure(s: LogSettings): void {
    this.defaultLevel = s.level;
    for (const c of COMPONENTS) this.componentLevels.set(c, s.componentLevels.get(c) ?? s.level);
    this.fileLevels = [];
    this.fineGrain = s.fineGrain;
    this.escape = s.escape;
    this.compiled = compileFormat(s.format, { prefixWithLocation: s.prefixWithLocation });
    this.sink?.close();
    this.sink = new LogSink(s.path, s.flushIntervalMs);
    this.flushIntervalMs = s.flushIntervalMs;
    this.generation++;
  }

  levelFor(component: string, file: string): number {
    if (this.fineGrain) {
      for (const f of this.fileLevels) if (f.matcher.test(file)) return f.level;
      return this.defaultLevel;
    }
    return this.componentLevels.get(component) ?? this.defaultLevel;
  }

  setComponentLevel(component: string, level: number): void {
    this.componentLevels.set(component, level);
    this.generation++;
  }

  setAllLevels(level: number): void {
    this.defaultLevel = level;
    for (const c of this.componentLevels.keys()) this.componentLevels.set(c, level);
    this.fileLevels = [];
    this.generation++;
  }

  /** Fine-grain mode: a glob (`*`, `?`) or a basename; the first matching pattern wins. */
  setFileLevel(pattern: string, level: number): void {
    const glob = pattern.includes('/') || /[*?]/.test(pattern) ? pattern : `*/${pattern}`;
    const source = glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
    this.fileLevels = [{ pattern, matcher: new RegExp(`^${source}$`), level }, ...this.fileLevels.filter((f) => f.pattern !== pattern)];
    this.generation++;
  }

  listLevels(): [string, LevelName][] {
    if (this.fineGrain) return [...this.files].sort().map((f) => [f, levelName(this.levelFor('', f))]);
    return [...this.componentLevels].map(([c, l]) => [c, levelName(l)]);
  }

  write(record: LogRecord): void {
    const line = this.compiled.format(record, { role: this.role, pid: process.pid, escape: this.escape });
    if (!this.sink) this.sink = new LogSink('', 0);
    this.sink.write(line + '\n', record.level >= Level.error);
  }
}

export const registry = new Registry();

/** `%t`: the role of this process in the tree. */
export function setLogRole(role: string): void {
  registry.role = role;
}

export function configureLogging(settings: LogSettings): void {
  registry.configure(settings);
}

/** A POST /logging change, as every process applies it to its own loggers. */
export function applyLogLevelChange(change: { kind: 'all'; level: number } | { kind: 'some'; levels: [string, number][] }): void {
  if (change.kind === 'all') {
    registry.setAllLevels(change.level);
    return;
  }
  for (const [name, level] of change.levels) {
    if (registry.fineGrain) registry.setFileLevel(name, level);
    else registry.setComponentLevel(name, level);
  }
}

/** Access-log files, one writer per path in a process (Envoy's access log manager shares them too). */
const accessLogFiles = new Map<string, LogSink>();
/** Their `filesystem.*` figures, shared as Envoy's are. */
let fileFigures: SinkFigures | undefined;

/**
 * The buffered writer of an access log: a file path, or '' with fd 1 or 2 for the stdout and
 * stderr loggers. Flushed like the log (`--file-flush-interval-msec`, a full buffer, exit) and
 * reopened with it (SIGUSR1, POST /reopen_logs).
 */
export function accessLogSink(path: string, stdFd: 1 | 2 = 1): LogSink {
  const key = path || `fd:${stdFd}`;
  let sink = accessLogFiles.get(key);
  if (!sink) {
    fileFigures ??= {
      writeBuffered: stats.counter('filesystem.write_buffered'),
      writeCompleted: stats.counter('filesystem.write_completed'),
      writeFailed: stats.counter('filesystem.write_failed'),
      flushedByTimer: stats.counter('filesystem.flushed_by_timer'),
      reopenFailed: stats.counter('filesystem.reopen_failed'),
      totalBuffered: stats.gauge('filesystem.write_total_buffered'),
    };
    sink = new LogSink(path, registry.flushIntervalMs, stdFd, fileFigures);
    accessLogFiles.set(key, sink);
  }
  return sink;
}

export function flushLogs(): void {
  registry.sink?.flush();
  for (const sink of accessLogFiles.values()) sink.flush();
}

export function reopenLogs(): void {
  registry.sink?.reopen();
  for (const sink of accessLogFiles.values()) sink.reopen();
}

process.on('exit', flushLogs);

/**
 * Call sites already resolved, by their stack frame's text: a bundle's origin table is read when a
 * lookup needs it and held only weakly (shared/bundle-sources.ts), so a line logged again does not
 * read it again. Bounded: a process logs from a few hundred places; past the bound it starts over.
 */
const callSites = new Map<string, { line: number; func: string }>();
const CALL_SITES_KEPT = 4096;

/**
 * The caller's line and function, from a one-frame stack. The text form of the stack is parsed
 * (not V8's structured frames) because it is the form that source maps apply to, under tsx in
 * development as under `--enable-source-maps`; in a role's bundle, the build's origin table does.
 */
function captureCallSite(skip: (...args: never[]) => unknown): { line: number; func: string } {
  const holder: { stack?: string } = {};
  const previousLimit = Error.stackTraceLimit;
  Error.stackTraceLimit = 1;
  Error.captureStackTrace(holder, skip);
  Error.stackTraceLimit = previousLimit;
  const frame = holder.stack?.split('\n')[1] ?? '';
  let site = callSites.get(frame);
  if (site === undefined) {
    site = resolveCallSite(frame);
    if (callSites.size >= CALL_SITES_KEPT) callSites.clear();
    callSites.set(frame, site);
  }
  return site;
}

function resolveCallSite(frame: string): { line: number; func: string } {
  const m = /^\s*at (?:(.*?) \()?(.*):(\d+):(\d+)\)?$/.exec(frame);
  if (!m) return { line: 0, func: '' };
  const line = isBundle(m[2]!) ? (bundleOrigin(m[2]!, Number(m[3]), Number(m[4]) - 1)?.line ?? 0) : Number(m[3]);
  return { line, func: m[1] ?? '' };
}

export class Logger {
  private generation = -1;
  private threshold: number = Level.info;
  readonly file: string;

  constructor(
    readonly component: Component,
    moduleUrl: string,
  ) {
    const path = moduleUrl.startsWith('file:') ? fileURLToPath(moduleUrl) : moduleUrl;
    this.file = relative(packageRoot, path);
    registry.files.add(this.file);
  }

  enabled(level: number): boolean {
    if (this.generation !== registry.generation) {
      this.threshold = registry.levelFor(this.component, this.file);
      this.generation = registry.generation;
    }
    return level >= this.threshold && level < Level.off;
  }

  private emit(level: number, message: string, skip: (...args: never[]) => unknown): void {
    if (!this.enabled(level)) return;
    const site = registry.compiled.needsCallSite ? captureCallSite(skip) : { line: 0, func: '' };
    registry.write({
      level,
      logger: this.component,
      message,
      time: performance.timeOrigin + performance.now(),
      file: this.file,
      line: site.line,
      func: site.func,
    });
  }

  trace(message: string): void { this.emit(Level.trace, message, this.trace); }
  debug(message: string): void { this.emit(Level.debug, message, this.debug); }
  info(message: string): void { this.emit(Level.info, message, this.info); }
  warn(message: string): void { this.emit(Level.warning, message, this.warn); }
  error(message: string): void { this.emit(Level.error, message, this.error); }
  critical(message: string): void { this.emit(Level.critical, message, this.critical); }
}

/** `const log = getLogger('upstream', import.meta.url)` at the top of a module. */
export function getLogger(component: Component, moduleUrl: string): Logger {
  return new Logger(component, moduleUrl);
}
