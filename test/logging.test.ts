import assert from 'node:assert/strict';
import { readFileSync, renameSync } from 'node:fs';
import { after, describe, it } from 'node:test';
import { compileFormat, DEFAULT_LOG_FORMAT, escapeMessage, type LogRecord } from '../shared/log/format.js';
import { Level } from '../shared/log/levels.js';
import { configureLogging, flushLogs, getLogger, registry, reopenLogs, setLogRole, type LogSettings } from '../shared/log/logger.js';
import { LogSink } from '../shared/log/sink.js';
import { minimalBootstrap } from './helpers/bootstraps.js';
import { runProxy, tempDir } from './helpers/cli.js';
import { waitFor } from './helpers/proxy.js';

const tmp = tempDir();
after(() => tmp.cleanup());

// 2026-03-04 05:06:07.089123 local time, a Wednesday
const when = new Date(2026, 2, 4, 5, 6, 7, 89).getTime() + 0.123;
const record: LogRecord = { level: Level.warning, logger: 'upstream', message: 'hello', time: when, file: 'worker/upstream/pool.ts', line: 42, func: 'connect' };
const ctx = { role: 'worker_1', pid: 4242, escape: false };
const fmt = (pattern: string, r: Partial<LogRecord> = {}, c = ctx) => compileFormat(pattern).format({ ...record, ...r }, c);

describe('log format flags', () => {
  const offset = -new Date(when).getTimezoneOffset();
  const z = `${offset < 0 ? '-' : '+'}${String(Math.floor(Math.abs(offset) / 60)).padStart(2, '0')}:${String(Math.abs(offset) % 60).padStart(2, '0')}`;
  const table: [string, string][] = [
    ['%v', 'hello'], ['%t', 'worker_1'], ['%P', '4242'], ['%n', 'upstream'], ['%l', 'warning'], ['%L', 'W'],
    ['%a', 'Wed'], ['%A', 'Wednesday'], ['%b', 'Mar'], ['%B', 'March'], ['%c', 'Wed Mar  4 05:06:07 2026'],
    ['%C', '26'], ['%Y', '2026'], ['%D', '03/04/26'], ['%x', '03/04/26'], ['%m', '03'], ['%d', '04'],
    ['%H', '05'], ['%I', '05'], ['%M', '06'], ['%S', '07'], ['%e', '089'], ['%f', '089123'], ['%F', '089123000'],
    ['%p', 'AM'], ['%r', '05:06:07 AM'], ['%R', '05:06'], ['%T', '05:06:07'], ['%X', '05:06:07'], ['%z', z],
    ['%%', '%'], ['%@', 'worker/upstream/pool.ts:42'], ['%s', 'pool.ts'], ['%g', 'worker/upstream/pool.ts'], ['%#', '42'], ['%!', 'connect'],
  ];
  for (const [flag, expected] of table) it(`${flag} → ${expected}`, () => assert.equal(fmt(flag), expected));

  it('the default format is Envoy\'s', () => {
    assert.equal(fmt(DEFAULT_LOG_FORMAT), '[2026-03-04 05:06:07.089][worker_1][warning][upstream] [worker/upstream/pool.ts:42] hello');
  });

  it('pads with spdlog alignment specs', () => {
    assert.equal(fmt('[%8l]'), '[ warning]');
    assert.equal(fmt('[%-8n]'), '[upstream]');
    assert.equal(fmt('[%-10n]'), '[upstream  ]');
    assert.equal(fmt('[%=9L]'), '[    W    ]');
  });

  it('prints unknown flags verbatim', () => assert.equal(fmt('%q %v'), '%q hello'));

  it('--log-format-prefix-with-location puts [%g:%#] before every %v', () => {
    assert.equal(compileFormat('%v|%v', { prefixWithLocation: true }).format(record, ctx), '[worker/upstream/pool.ts:42] hello|[worker/upstream/pool.ts:42] hello');
  });

  it('--log-format-escaped keeps one entry on one line', () => {
    assert.equal(escapeMessage('a\nb\tc\\d"\x01'), 'a\\nb\\tc\\\\d\\"\\001');
    assert.equal(fmt('%v', { message: 'two\nlines' }, { ...ctx, escape: true }), 'two\\nlines');
  });

  it('needs a call site only for %#, %@ and %!', () => {
    assert.equal(compileFormat('[%g] %v').needsCallSite, false);
    assert.equal(compileFormat(DEFAULT_LOG_FORMAT).needsCallSite, true);
  });
});

function settings(over: Partial<LogSettings>): LogSettings {
  return { level: Level.info, componentLevels: new Map(), format: '%l|%n|%v', prefixWithLocation: false, escape: false, fineGrain: false, path: '', flushIntervalMs: 0, ...over };
}

describe('loggers and levels', () => {
  it('filter by the component level, then the global level', () => {
    const path = `${tmp.dir}/levels.log`;
    configureLogging(settings({ level: Level.warning, componentLevels: new Map([['upstream', Level.debug]]), path }));
    const upstream = getLogger('upstream', import.meta.url);
    const main = getLogger('main', import.meta.url);
    upstream.debug('shown');
    upstream.trace('hidden');
    main.info('hidden');
    main.error('shown too');
    registry.setComponentLevel('main', Level.trace);
    main.trace('after a runtime change');
    flushLogs();
    assert.equal(readFileSync(path, 'utf8'), 'debug|upstream|shown\nerror|main|shown too\ntrace|main|after a runtime change\n');
  });

  it('capture the caller\'s line when the format prints it', () => {
    const path = `${tmp.dir}/site.log`;
    configureLogging(settings({ path, format: '%s:%# %v' }));
    const log = getLogger('main', import.meta.url);
    const line = new Error().stack!.split('\n')[1]!.match(/:(\d+):\d+\)?$/)![1];
    log.info('here');
    flushLogs();
    assert.equal(readFileSync(path, 'utf8'), `logging.test.ts:${Number(line) + 1} here\n`);
  });

  it('in fine-grain mode, are set per file by glob or basename', () => {
    const path = `${tmp.dir}/fine.log`;
    configureLogging(settings({ path, fineGrain: true, level: Level.info }));
    const log = getLogger('main', import.meta.url);
    log.debug('hidden');
    registry.setFileLevel('logging.test.ts', Level.debug);
    log.debug('by basename');
    registry.setFileLevel('test/*', Level.error);
    log.warn('hidden by the newer glob');
    flushLogs();
    assert.equal(readFileSync(path, 'utf8'), 'debug|main|by basename\n');
    assert.ok(registry.listLevels().some(([file, level]) => file === 'test/logging.test.ts' && level === 'error'));
  });

  it('use the process role for %t', () => {
    const path = `${tmp.dir}/role.log`;
    configureLogging(settings({ path, format: '[%t] %v' }));
    setLogRole('worker_3');
    getLogger('main', import.meta.url).info('x');
    setLogRole('main');
    flushLogs();
    assert.equal(readFileSync(path, 'utf8'), '[worker_3] x\n');
  });

  it('survive log rotation: rename, reopen, keep writing', () => {
    const path = `${tmp.dir}/rotate.log`;
    configureLogging(settings({ path }));
    const log = getLogger('main', import.meta.url);
    for (let i = 0; i < 50; i++) log.info(`before ${i}`);
    renameSync(path, `${path}.1`);
    reopenLogs();
    for (let i = 0; i < 28; i++) log.info(`after ${i}`);
    flushLogs();
    const old = readFileSync(`${path}.1`, 'utf8').trim().split('\n');
    const fresh = readFileSync(path, 'utf8').trim().split('\n');
    assert.equal(old.length + fresh.length, 78);
    assert.equal(fresh[0], 'info|main|after 0');
  });
});

describe('the file sink', () => {
  it('holds lines until the flush interval, but writes errors at once', async () => {
    const path = tmp.file('sink.log', '');
    const sink = new LogSink(path, 50);
    sink.write('buffered\n', false);
    assert.equal(readFileSync(path, 'utf8'), '');
    await waitFor('the flush interval to write the line', () => (readFileSync(path, 'utf8') === 'buffered\n' ? true : undefined));
    sink.write('urgent\n', true);
    assert.equal(readFileSync(path, 'utf8'), 'buffered\nurgent\n');
    sink.close();
  });

  it('flushes when 64 KiB are buffered', () => {
    const path = tmp.file('full.log', '');
    const sink = new LogSink(path, 0);
    const line = 'x'.repeat(1023) + '\n';
    for (let i = 0; i < 63; i++) sink.write(line, false);
    assert.equal(readFileSync(path, 'utf8').length, 0);
    sink.write(line, false);
    assert.equal(readFileSync(path, 'utf8').length, 64 * 1024);
    sink.close();
  });
});

describe('logging options on the real command line', () => {
  const bad = () => {
    const doc = minimalBootstrap() as Record<string, any>;
    doc.admin.bogus = 1;
    return tmp.file('bad.json', JSON.stringify(doc));
  };

  it('--log-path writes the log to a file instead of stderr', async () => {
    const logPath = `${tmp.dir}/cli.log`;
    const out = await runProxy(['--mode', 'validate', '-c', bad(), '--log-path', logPath]);
    assert.equal(out.code, 1);
    assert.equal(out.stderr, '');
    assert.match(readFileSync(logPath, 'utf8'), /\[critical\]\[main\] .*admin\.bogus: unknown field/);
  });

  it('--log-level off and --component-log-level silence the log', async () => {
    assert.equal((await runProxy(['--mode', 'validate', '-c', bad(), '-l', 'off'])).stderr, '');
    assert.equal((await runProxy(['--mode', 'validate', '-c', bad(), '--component-log-level', 'main:off'])).stderr, '');
  });

  it('--log-format shapes every line', async () => {
    const out = await runProxy(['--mode', 'validate', '-c', bad(), '--log-format', '%L %t %n: %v']);
    assert.match(out.stderr, /^C main main: error initializing configuration/);
  });
});
