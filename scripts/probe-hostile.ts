// Issue 13's probes at full size, against a real proxy tree: admin fuzz, request smuggling,
// HTTP/2 abuse (garbage frames, SETTINGS flood, rapid reset), and hot-restart datagram fuzz with
// a real restart afterwards. Prints what it finds; asserts nothing (the tests run the same probes
// smaller: admin-fuzz, smuggling, http-hardening, hot-restart-protocol, hot-restart-trust).
// Usage: npm run build && node --import tsx scripts/probe-hostile.ts
//   env: ADMIN_REQUESTS=10000 SEED=13 GARBAGE_CONNECTIONS=200 RESET_CONNECTIONS=4 DATAGRAMS=10000 BOOTSTRAPS=1000
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { native } from '../shared/native/index.js';
import { epochSockets } from '../supervisor/hot-restart/naming.js';
import { encodeMessage } from '../supervisor/hot-restart/framing.js';
import { fuzzAdmin } from '../test/helpers/admin-fuzz.js';
import { fuzzedBootstraps } from '../test/helpers/bootstrap-fuzz.js';
import { runProxy, tempDir } from '../test/helpers/cli.js';
import { hcmFilter, routesListener, staticCluster } from '../test/helpers/bootstraps.js';
import { connectionsClosedByServer, GARBAGE, PREFACE, rapidResetStorm, SETTINGS } from '../test/helpers/http2-abuse.js';
import { httpRequest, startProxy, statValue, stopAllProxies, waitFor, type RunningProxy } from '../test/helpers/proxy.js';
import { sendVector, statuses, VECTORS } from '../test/helpers/smuggling-vectors.js';
import { startUpstream } from '../test/helpers/upstream.js';

const ADMIN_REQUESTS = Number(process.env.ADMIN_REQUESTS ?? 10_000);
const SEED = Number(process.env.SEED ?? 13);
const GARBAGE_CONNECTIONS = Number(process.env.GARBAGE_CONNECTIONS ?? 200);
const RESET_CONNECTIONS = Number(process.env.RESET_CONNECTIONS ?? 4);
const DATAGRAMS = Number(process.env.DATAGRAMS ?? 10_000);
const BOOTSTRAPS = Number(process.env.BOOTSTRAPS ?? 1000);
const SOCKET_PATH = `@proxy_probe_hostile_${process.pid}`;

/** The resident memory of the proxy's whole tree, in MB. */
function treeRssMb(p: RunningProxy): number {
  let kb = 0;
  for (const pid of [p.pid, ...p.children()]) {
    try {
      kb += Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
    } catch {
      // gone
    }
  }
  return Math.round(kb / 1024);
}

function bootstrap(upstreamPort: number): object {
  const h2only = { name: 'h2only', address: { socket_address: { address: '127.0.0.1', port_value: 0 } }, filter_chains: [{ filters: [hcmFilter('h2only', [{ match: { prefix: '/' }, direct_response: { status: 200, body: { inline_string: 'h2' } } }])] }] };
  (h2only.filter_chains[0]!.filters[0]!.typed_config as Record<string, unknown>).codec_type = 'HTTP2';
  return {
    admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
    static_resources: { listeners: [routesListener('web', [{ match: { prefix: '/' }, route: { cluster: 'up' } }]), h2only], clusters: [staticCluster('up', upstreamPort)] },
    layered_runtime: { layers: [{ name: 'static', static_layer: {} }, { name: 'admin', admin_layer: {} }] },
  };
}

async function adminFuzz(p: RunningProxy): Promise<void> {
  const before = treeRssMb(p);
  const ready = (await httpRequest(`http://${p.admin}/ready`)).body;
  const help = (await httpRequest(`http://${p.admin}/help`)).body;
  const started = Date.now();
  const outcome = await fuzzAdmin(p.admin, help, ADMIN_REQUESTS, SEED);
  const statusText = [...outcome.statuses].sort(([a], [b]) => a - b).map(([s, n]) => `${s}: ${n}`).join(', ');
  const readyAfter = (await httpRequest(`http://${p.admin}/ready`)).body;
  console.log(`admin fuzz: ${outcome.requests} requests (seed ${SEED}) in ${Date.now() - started} ms; statuses {${statusText}}`);
  console.log(`  5xx or no answer: ${outcome.failures.length}${outcome.failures.length ? ` (first: ${outcome.failures.slice(0, 5).join('; ')})` : ''}`);
  console.log(`  /ready before ${JSON.stringify(ready.trim())}, after ${JSON.stringify(readyAfter.trim())}; tree RSS ${before} MB -> ${treeRssMb(p)} MB`);
}

async function smuggling(p: RunningProxy, upstream: { hits: number }): Promise<void> {
  let refused = 0;
  let served = 0;
  const wrong: string[] = [];
  for (const v of VECTORS) {
    const codes = statuses(await sendVector(p.ports.get('web')!, v.bytes));
    if (codes[0] === 400) refused++;
    else if (codes[0] === 200) served++;
    if ((v.expect === 'refused') !== (codes[0] === (v.status ?? 400))) wrong.push(`${v.name}: ${codes.join(',')}`);
  }
  console.log(`request smuggling: ${VECTORS.length} vectors: refused ${refused}, served ${served}, not as expected ${wrong.length}${wrong.length ? ` (${wrong.join('; ')})` : ''}; upstream requests ${upstream.hits}`);
}

async function latencies(port: number, until: () => boolean): Promise<number[]> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const out: number[] = [];
  do {
    const t = performance.now();
    await new Promise<void>((resolve) => request({ host: '127.0.0.1', port, path: '/', agent }, (r) => r.resume().on('end', resolve)).on('error', () => resolve()).end());
    out.push(performance.now() - t);
  } while (!until());
  agent.destroy();
  return out;
}

const summary = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return `p50 ${s[Math.floor(s.length / 2)]?.toFixed(1)} ms, max ${s.at(-1)?.toFixed(1)} ms over ${s.length} requests`;
};

async function http2Abuse(p: RunningProxy): Promise<void> {
  const rssBefore = treeRssMb(p);
  const h2port = p.ports.get('h2only')!;
  const variants = [...GARBAGE, Buffer.concat([PREFACE, SETTINGS, randomBytes(500)])];
  const closedAt = await connectionsClosedByServer(h2port, (i) => variants[i % variants.length]!, GARBAGE_CONNECTIONS);
  const gauge = await waitFor('the gauge back to 0', async () => ((await statValue(p, 'http.h2only.downstream_cx_active')) === 0 ? 0 : undefined), 60_000).catch(() => -1);
  console.log(`HTTP/2 garbage: ${GARBAGE_CONNECTIONS} connections, all closed by the proxy within ${Math.max(...closedAt)} ms (median ${closedAt.sort((a, b) => a - b)[closedAt.length >> 1]} ms); downstream_cx_active after: ${gauge === 0 ? 0 : 'not 0'}; protocol_error ${await statValue(p, 'http.h2only.downstream_cx_protocol_error')}, keepalive_timeout ${await statValue(p, 'http2.keepalive_timeout')}`);

  const [floodClosed] = await connectionsClosedByServer(h2port, () => Buffer.concat([PREFACE, ...Array.from({ length: 20_000 }, () => SETTINGS)]), 1);
  console.log(`HTTP/2 SETTINGS flood (20,000 frames): closed by the proxy after ${floodClosed} ms`);

  const port = p.ports.get('web')!;
  const quiet = await latencies(port, (() => {
    let n = 0;
    return () => ++n >= 200;
  })());
  let storming = RESET_CONNECTIONS;
  const streamsBeforeAbort: number[] = [];
  const during = latencies(port, () => storming === 0);
  await Promise.all(
    Array.from({ length: RESET_CONNECTIONS }, async () => {
      const storm = await rapidResetStorm(port, '/hold?key=never', 20_000);
      streamsBeforeAbort.push(storm.closedByServer ? storm.opened : Infinity);
      storming--;
    }),
  );
  const stormLatencies = await during;
  console.log(`HTTP/2 rapid reset: ${RESET_CONNECTIONS} connections; streams opened before the proxy closed each (Infinity: never closed): ${streamsBeforeAbort.join(', ')}; downstream_rq_too_many_premature_resets ${await statValue(p, 'http.web.downstream_rq_too_many_premature_resets')}`);
  console.log(`  another client's HTTP/1.1 requests: quiet ${summary(quiet)}; during the storm ${summary(stormLatencies)}`);
  console.log(`  tree RSS over the HTTP/2 abuse: ${rssBefore} MB -> ${treeRssMb(p)} MB`);
}

async function datagramFuzz(p: RunningProxy, upstreamPort: number): Promise<void> {
  const names = epochSockets(SOCKET_PATH, p.baseId, 1);
  const probeName = `@proxy_probe_hostile_sender_${process.pid}`;
  const probe = native.dgramOpen(probeName, () => undefined);
  const rssBefore = treeRssMb(p);
  const declares1MiB = Buffer.alloc(18);
  declares1MiB.writeBigUInt64BE(1n << 20n, 0);
  const unsealed = encodeMessage({ request: { pass_listen_socket: { address: `tcp://127.0.0.1:${p.ports.get('web')}` } } })[0]!;
  const started = Date.now();
  for (let i = 0; i < DATAGRAMS; i++) {
    const d = i % 10 === 0 ? declares1MiB : i % 10 === 1 ? unsealed : randomBytes(1 + ((i * 7919) % 4000));
    for (;;) {
      try {
        native.dgramSend(probe, names.parentOfPrevious!, d, -1);
        break;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') throw err;
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
  }
  native.dgramClose(probe);
  const refused = await waitFor('every datagram counted', async () => {
    const n = await statValue(p, 'server.hot_restart_refused_datagrams');
    return n >= DATAGRAMS ? n : undefined;
  }, 60_000).catch(() => NaN);
  console.log(`hot-restart datagram fuzz: ${DATAGRAMS} datagrams (random, 1 MiB declarations, unsealed requests) in ${Date.now() - started} ms; refused ${refused}; tree RSS ${rssBefore} MB -> ${treeRssMb(p)} MB`);
  const t = Date.now();
  const next = await startProxy(bootstrap(upstreamPort), ['--base-id', String(p.baseId), '--socket-path', SOCKET_PATH, '--concurrency', '1', '--restart-epoch', '1', '--parent-shutdown-time-s', '1']);
  const sameSocket = next.ports.get('web') === p.ports.get('web');
  console.log(`  then a real hot restart: epoch 1 ready in ${Date.now() - t} ms, same listening socket: ${sameSocket}; answers: ${(await httpRequest(`http://127.0.0.1:${next.ports.get('web')}/`)).status}`);
}

/** Every fuzzed bootstrap through `proxy --mode validate`: exit 0 or 1, never a stack trace. */
async function bootstrapFuzz(): Promise<void> {
  const tmp = tempDir('proxy-probe-');
  const exits = new Map<number | null, number>();
  const stackTraces: number[] = [];
  let slowest = 0;
  const started = Date.now();
  try {
    const inputs = fuzzedBootstraps(BOOTSTRAPS);
    const worker = async () => {
      for (let next = inputs.next(); !next.done; next = inputs.next()) {
        const { index, ext, bytes } = next.value;
        const t = Date.now();
        const out = await runProxy(['--mode', 'validate', '-c', tmp.file(`fuzz-${index}.${ext}`, bytes)]);
        slowest = Math.max(slowest, Date.now() - t);
        exits.set(out.code, (exits.get(out.code) ?? 0) + 1);
        if (/^\s+at /m.test(out.stderr)) stackTraces.push(index);
      }
    };
    await Promise.all([worker(), worker()]);
  } finally {
    tmp.cleanup();
  }
  const exitText = [...exits].map(([code, n]) => `exit ${code}: ${n}`).join(', ');
  console.log(`bootstrap fuzz through the CLI: ${BOOTSTRAPS} inputs in ${Date.now() - started} ms (slowest ${slowest} ms); ${exitText}; stack traces: ${stackTraces.length}${stackTraces.length ? ` (inputs ${stackTraces.slice(0, 10).join(', ')})` : ''}`);
}

async function main(): Promise<void> {
  await bootstrapFuzz();
  const upstream = await startUpstream('up');
  try {
    const p = await startProxy(bootstrap(upstream.port), ['--socket-path', SOCKET_PATH, '--concurrency', '1']);
    console.log(`proxy tree RSS at start: ${treeRssMb(p)} MB`);
    await adminFuzz(p);
    await smuggling(p, upstream);
    await http2Abuse(p);
    await datagramFuzz(p, upstream.port);
  } finally {
    await stopAllProxies();
    await upstream.close();
  }
}

await main();
