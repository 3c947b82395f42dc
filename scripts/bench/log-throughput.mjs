// Log lines per second written to a file by the real (compiled) logger: with the default Envoy
// format, which prints the caller's line and so captures a stack frame per written line; with
// a format without source location; and for lines below the level. Plain JavaScript on
// purpose: tsx's source-map hooks would slow every stack capture. Prints figures only.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const dist = (path) => new URL(`../../dist/shared/log/${path}`, import.meta.url).href;
const { DEFAULT_LOG_FORMAT } = await import(dist('format.js'));
const { Level } = await import(dist('levels.js'));
const { configureLogging, flushLogs, getLogger } = await import(dist('logger.js'));

const LINES = Number(process.env.LINES ?? 200_000);
const dir = mkdtempSync(join(tmpdir(), 'bench-log-'));
const log = getLogger('upstream', import.meta.url);

async function measure(label, format, level = Level.info) {
  const path = join(dir, `${label.replace(/\W+/g, '_')}.log`);
  configureLogging({ level, componentLevels: new Map(), format, prefixWithLocation: false, escape: false, fineGrain: false, path, flushIntervalMs: 10_000 });
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < LINES; i += 100) {
    for (let j = 0; j < 100; j++) log.info(`upstream request ${i + j} done in 3 ms`);
    await new Promise((r) => setImmediate(r)); // yield between events, as a server does
  }
  flushLogs();
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const mib = (statSync(path).size / 1048576).toFixed(1);
  console.log(`  ${label.padEnd(40)} ${Math.round(LINES / seconds).toLocaleString('en').padStart(10)} lines/s  ${((seconds * 1e9) / LINES).toFixed(0).padStart(5)} ns/line  ${mib} MiB`);
}

console.log(`log throughput to a file: ${LINES.toLocaleString('en')} lines each, node ${process.version}`);
await measure('default format (call site %g:%#)', DEFAULT_LOG_FORMAT);
await measure('[%Y-%m-%d %T.%e][%t][%l][%n] %v', '[%Y-%m-%d %T.%e][%t][%l][%n] %v');
await measure('below the level (info at warning)', DEFAULT_LOG_FORMAT, Level.warning);
rmSync(dir, { recursive: true, force: true });
