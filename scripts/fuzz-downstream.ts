// Issue 39's downstream fuzz at length: seeded fuzzed HTTP/1 and HTTP/2 connections (see
// test/helpers/downstream-fuzz.ts) against a real proxy tree with two workers, for a minute by
// default, alternating between a listener that refuses HTTP/1.0 and one that accepts it. Prints
// the vectors tried, what they were answered, and the worker restarts (the goal is 0); a
// restart names the batch of vectors that caused it. test/downstream-fuzz.test.ts runs the same
// fuzz smaller and asserts on it.
// Usage: npm run build && node --import tsx scripts/fuzz-downstream.ts
//   env: SECONDS=60 SEED=39 CONCURRENCY=32 DEADLINE_MS=300
import { fuzzBootstrap, fuzzDownstream, type Answer, type FuzzVector } from '../test/helpers/downstream-fuzz.js';
import { httpRequest, startProxy, stopAllProxies } from '../test/helpers/proxy.js';
import { startUpstream } from '../test/helpers/upstream.js';

const SECONDS = Number(process.env.SECONDS ?? 60);
const SEED = Number(process.env.SEED ?? 39);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 32);
const DEADLINE_MS = Number(process.env.DEADLINE_MS ?? 300);

const upstream = await startUpstream('up');
const proxy = await startProxy(fuzzBootstrap(upstream.port), ['--concurrency', '2']);
let processes = proxy.children().sort();
let restarts = 0;
let probesFailed = 0;
const findings: string[] = [];
const answers = new Map<Answer, number>();
let vectors = 0;
let h1 = 0;
let h2 = 0;
const started = Date.now();
try {
  let round = 0;
  while (Date.now() - started < SECONDS * 1000) {
    const listener = round % 2 === 0 ? 'strict' : 'lenient';
    const port = proxy.ports.get(listener)!;
    let batch: FuzzVector[] = [];
    const outcome = await fuzzDownstream(port, {
      seed: SEED + round,
      until: Math.min(10_000, SECONDS * 1000 - (Date.now() - started)),
      concurrency: CONCURRENCY,
      checkEvery: CONCURRENCY,
      deadlineMs: DEADLINE_MS,
      onVector: (v) => {
        if (batch.length === CONCURRENCY) batch = [];
        batch.push(v);
      },
      check: async () => {
        const now = proxy.children().sort();
        const replaced = processes.filter((pid) => !now.includes(pid)).length;
        if (replaced > 0) {
          restarts += replaced;
          findings.push(`${replaced} process(es) replaced during a batch on ${listener} (seed ${SEED + round}):\n  ${batch.map((v) => v.describe).join('\n  ')}`);
          processes = now;
        }
        const probe = await httpRequest(`http://127.0.0.1:${port}/`).catch(() => undefined);
        if (probe?.status !== 200) probesFailed++;
      },
    });
    vectors += outcome.vectors;
    h1 += outcome.h1;
    h2 += outcome.h2;
    for (const [answer, n] of outcome.answers) answers.set(answer, (answers.get(answer) ?? 0) + n);
    round++;
  }
} finally {
  await stopAllProxies();
  await upstream.close();
}
const seconds = (Date.now() - started) / 1000;
const answered = [...answers].sort(([a], [b]) => String(a).localeCompare(String(b))).map(([a, n]) => `${a}: ${n}`).join(', ');
console.log(`downstream fuzz: ${vectors} vectors (${h1} HTTP/1, ${h2} HTTP/2) in ${seconds.toFixed(1)} s, seeds ${SEED}..; answers ${answered}`);
console.log(`worker restarts: ${restarts}; probe requests not served: ${probesFailed}`);
for (const f of findings) console.log(`FINDING ${f}`);
const caught = proxy.output().match(/request handling failed[^\n]*/g) ?? [];
console.log(`defects caught by the connection manager (answered 500): ${caught.length}`);
for (const c of caught.slice(0, 5)) console.log(`  ${c}`);
process.exit(restarts > 0 || probesFailed > 0 ? 1 : 0);
