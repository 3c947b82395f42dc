// Wall time of `proxy --mode validate` on a generated bootstrap with 1,000 clusters and
// 1,000 listeners (each listener an HTTP connection manager routing to its own cluster),
// through the real compiled command, in YAML, JSON and binary proto. Prints figures; asserts nothing.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fromProto3JSON } from 'proto3-json-serializer';
import { BOOTSTRAP_TYPE } from '../../shared/config/bootstrap.js';
import { envoySchema } from '../../shared/config/schema.js';
import { httpListener, staticCluster } from '../../test/helpers/bootstraps.js';

const COUNT = Number(process.env.COUNT ?? 1000);
const RUNS = Number(process.env.RUNS ?? 5);
const bin = join(import.meta.dirname, '../../bin/proxy.js');

const doc = {
  admin: { address: { socket_address: { address: '127.0.0.1', port_value: 9901 } } },
  static_resources: {
    clusters: Array.from({ length: COUNT }, (_, i) => staticCluster(`service_${i}`, 20000 + (i % 40000))),
    listeners: Array.from({ length: COUNT }, (_, i) => httpListener(`listener_${i}`, 30000 + i, `service_${i}`)),
  },
};

const dir = mkdtempSync(join(tmpdir(), 'bench-validate-'));
const type = envoySchema().lookupType(BOOTSTRAP_TYPE);
const files = {
  yaml: join(dir, 'large.yaml'),
  json: join(dir, 'large.json'),
  pb: join(dir, 'large.pb'),
};
// JSON is valid YAML, but a bootstrap written as YAML uses block style: write it that way.
const toYaml = (v: unknown, indent = ''): string => {
  if (Array.isArray(v)) return v.map((item) => `\n${indent}- ${toYaml(item, indent + '  ').trimStart()}`).join('');
  if (v && typeof v === 'object') return Object.entries(v).map(([k, x]) => `\n${indent}${JSON.stringify(k)}:${typeof x === 'object' && x !== null ? toYaml(x, indent + '  ') : ' ' + JSON.stringify(x)}`).join('');
  return JSON.stringify(v);
};
writeFileSync(files.yaml, toYaml(doc).trimStart() + '\n');
writeFileSync(files.json, JSON.stringify(doc));
writeFileSync(files.pb, type.encode(fromProto3JSON(type, doc as never)!).finish());

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
console.log(`validate: ${COUNT} clusters + ${COUNT} listeners, ${RUNS} runs each, node ${process.version}`);
for (const [format, path] of Object.entries(files)) {
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = process.hrtime.bigint();
    const r = spawnSync(process.execPath, [bin, '--mode', 'validate', '-c', path], { encoding: 'utf8' });
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
    if (r.status !== 0) throw new Error(`validate failed for ${format}: ${r.stderr}`);
  }
  const size = (statSync(path).size / 1024).toFixed(0);
  console.log(`  ${format.padEnd(5)} ${size.padStart(6)} KiB  median ${median(times).toFixed(0)} ms  min ${Math.min(...times).toFixed(0)} ms  max ${Math.max(...times).toFixed(0)} ms`);
}
const t0 = process.hrtime.bigint();
spawnSync(process.execPath, [bin, '--version']);
console.log(`  (process start-up alone, --version: ${(Number(process.hrtime.bigint() - t0) / 1e6).toFixed(0)} ms)`);
rmSync(dir, { recursive: true, force: true });
