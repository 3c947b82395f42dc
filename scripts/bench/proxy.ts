// npm run bench (proxy part): an upstream, the proxy with one worker, and load from wrk (or
// autocannon when wrk is not installed), beside a plain Node keep-alive proxy and, when installed,
// nginx with one worker and HAProxy with one thread (./peers.ts), measured in the same run, with
// this proxy's ratios to each; and Node's floors (./node-llhttp-proxy.mjs: llhttp on both sides
// and nothing else; ./node-relay.mjs: bytes relayed, no HTTP), with theirs: what any proxy on Node's
// sockets spends before it does anything. Prints req/s, p50/p99 latency and proxy CPU µs per request, read from /proc for the
// proxy's whole process tree (supervisor, admin, worker). PROFILE=1 also writes CPU profiles of
// every proxy process and prints the worker's hottest functions. Without PROFILE it also measures
// the proxy with stats recording off (PROXY_BENCH_STATS=off), and the proxy with a file access log
// in Envoy's default format, and the proxy with outlier detection on the cluster, each against the
// plain proxy in alternating rounds; and TLS termination (a listener with a DownstreamTlsContext
// against the plaintext one), on keep-alive connections and with a handshake per request.
// HTTP filters (FILTER_BENCHES) are measured the same way, one at a time.
// BENCH_ONLY=outlier, tls, tracing, stats, statsd, access-log, or a filter bench's name (cors, local_ratelimit, …)
// measures only that cost;
// PAIRED=1 loads both sides of each comparison at once (see compare); ROUNDS=n rounds (default 3);
// PROFILE=1 PROFILE_FILTER=<name> profiles the proxy with that filter.
// BASELINE_REF=<git ref> measures this tree's proxy against the same bench bootstrap served by the
// proxy built from that commit (a git worktree in a temporary directory, sharing node_modules),
// in the same run: the cost or gain of everything between them (BENCH_ONLY=baseline: only that);
// BASELINE_BOOTSTRAP=access-log (or a filter bench's name) has both serve that bootstrap instead.
// Prints figures; asserts nothing.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import dgram from 'node:dgram';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchBootstrap, get, startPrintingPort, stopChildrenOnInterrupt, waitFor } from './harness.js';
import { FILTER_BENCHES } from './filter-benches.js';
import { startPeers } from './peers.js';
import { LOAD_CORE, pinned, pinningSummary, PROXY_CORE } from './pinning.js';
import { mapProfileToSources } from '../../shared/bundle-sources.js';
import { CLK_TCK, treeCpuSplit, treeCpuTicks } from './process-cpu.js';
import { loadToolSummary, runLoad as runLoadOf, runWrkAsync as runWrkAsyncOf, useWrk, type LoadResult, type LoadShape } from './wrk.js';

const DURATION_S = Number(process.env.DURATION ?? 10);
const WARMUP_S = Number(process.env.WARMUP ?? 3);
const CONNECTIONS = Number(process.env.CONNECTIONS ?? 50);
const root = join(import.meta.dirname, '../..');
const dir = mkdtempSync(join(tmpdir(), 'bench-proxy-'));
const children: ChildProcess[] = [];
stopChildrenOnInterrupt(children, dir);

/** A load target: its URL and the process tree to charge; `close` makes every request open a new connection. */
interface Target {
  url: string;
  pid: number;
  close?: boolean;
}

const shape = (close = false): LoadShape => ({ connections: CONNECTIONS, close, core: LOAD_CORE });
const runLoad = (url: string, seconds: number, close = false) => runLoadOf(url, seconds, shape(close));
const runWrkAsync = (url: string, seconds: number, close = false) => runWrkAsyncOf(url, seconds, shape(close), children);

function measure(label: string, url: string, pid: number, warmup = true, close = false): { rps: number; cpuUs: number; userUs: number; kernelUs: number; p99: number } {
  if (warmup) runLoad(url, WARMUP_S, close);
  const before = treeCpuSplit(pid);
  const r = runLoad(url, DURATION_S, close);
  const after = treeCpuSplit(pid);
  const perRequest = (ticks: number) => (ticks * (1e6 / CLK_TCK)) / Math.max(1, r.requests);
  const userUs = perRequest(after.user - before.user);
  const kernelUs = perRequest(after.kernel - before.kernel);
  const cpuUs = userUs + kernelUs;
  console.log(`  ${label.padEnd(34)} ${r.rps.toFixed(0).padStart(8)} req/s   p50 ${r.p50.toFixed(2).padStart(6)} ms   p99 ${r.p99.toFixed(2).padStart(6)} ms   ${cpuUs.toFixed(1).padStart(6)} µs CPU/req (user ${userUs.toFixed(1)}, kernel ${kernelUs.toFixed(1)})   ${r.errors} errors`);
  return { rps: r.rps, cpuUs, userUs, kernelUs, p99: r.p99 };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** The proxy as built at `ref`: a git worktree in the bench's temporary directory, sharing this tree's node_modules, built. */
function buildBaseline(ref: string): string {
  const tree = join(dir, 'baseline');
  const add = spawnSync('git', ['worktree', 'add', '--detach', tree, ref], { cwd: root, encoding: 'utf8' });
  if (add.status !== 0) throw new Error(`BASELINE_REF=${ref}: git worktree add failed: ${add.stderr.trim()}`);
  symlinkSync(join(root, 'node_modules'), join(tree, 'node_modules'));
  const build = spawnSync(process.execPath, ['scripts/build.mjs'], { cwd: tree, encoding: 'utf8' });
  if (build.status !== 0) throw new Error(`BASELINE_REF=${ref}: the build failed: ${build.stderr.trim()}`);
  return tree;
}

try {
  const upstream = await startPrintingPort(children, LOAD_CORE, [join(root, 'scripts/bench/upstream.mjs')]);
  const bootstrap = benchBootstrap(upstream.port);
  writeFileSync(join(dir, 'bootstrap.json'), JSON.stringify(bootstrap));
  const hcm = bootstrap.static_resources.listeners[0]!.filter_chains[0]!.filters[0]!.typed_config as Record<string, unknown>;
  hcm.access_log = [{ name: 'envoy.access_loggers.file', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.access_loggers.file.v3.FileAccessLog', path: join(dir, 'access.log') } }];
  writeFileSync(join(dir, 'bootstrap-access-log.json'), JSON.stringify(bootstrap));
  delete hcm.access_log;
  // Tracing with Zipkin at 100 % and 1 % random sampling, its collector played by the upstream (spans are posted in batches of 5).
  const zipkinCluster = { ...bootstrap.static_resources.clusters[0]!, name: 'zipkin', load_assignment: { ...bootstrap.static_resources.clusters[0]!.load_assignment, cluster_name: 'zipkin' } };
  for (const percent of [100, 1]) {
    hcm.tracing = { random_sampling: { value: percent }, provider: { name: 'envoy.tracers.zipkin', typed_config: { '@type': 'type.googleapis.com/envoy.config.trace.v3.ZipkinConfig', collector_cluster: 'zipkin', collector_endpoint: '/api/v2/spans', collector_endpoint_version: 'HTTP_JSON' } } };
    writeFileSync(join(dir, `bootstrap-tracing-${percent}.json`), JSON.stringify({ ...bootstrap, static_resources: { ...bootstrap.static_resources, clusters: [...bootstrap.static_resources.clusters, zipkinCluster] } }));
  }
  delete hcm.tracing;
  // A statsd sink: every histogram sample is a datagram when it is recorded (to a socket here that counts them).
  const statsdReceiver = dgram.createSocket('udp4');
  let statsdDatagrams = 0;
  statsdReceiver.on('message', () => statsdDatagrams++);
  await new Promise<void>((resolve) => statsdReceiver.bind(0, '127.0.0.1', () => resolve()));
  statsdReceiver.unref();
  const statsdPort = (statsdReceiver.address() as { port: number }).port;
  writeFileSync(join(dir, 'bootstrap-statsd.json'), JSON.stringify({ ...bootstrap, stats_sinks: [{ name: 'envoy.stat_sinks.statsd', typed_config: { '@type': 'type.googleapis.com/envoy.config.metrics.v3.StatsdSink', address: { socket_address: { address: '127.0.0.1', port_value: statsdPort } } } }] }));
  const cluster = bootstrap.static_resources.clusters[0] as Record<string, unknown>;
  cluster.outlier_detection = { consecutive_5xx: 5, interval: '10s' };
  writeFileSync(join(dir, 'bootstrap-outlier.json'), JSON.stringify(bootstrap));
  delete cluster.outlier_detection;
  // HTTP filters configured on every request: each one's own cost on the request path (FILTER_BENCHES).
  const filters = hcm.http_filters as object[];
  const vhost = (hcm.route_config as { virtual_hosts: Record<string, unknown>[] }).virtual_hosts[0]!;
  for (const [name, bench] of Object.entries(FILTER_BENCHES)) {
    hcm.http_filters = [{ name: bench.filter, typed_config: bench.config }, ...filters];
    if (bench.perRoute) vhost.typed_per_filter_config = { [bench.filter]: bench.perRoute };
    writeFileSync(join(dir, `bootstrap-${name}.json`), JSON.stringify(bootstrap));
    hcm.http_filters = filters;
    delete vhost.typed_per_filter_config;
  }
  spawnSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'), '-days', '2', '-subj', '/CN=bench'], { stdio: 'ignore' });
  const chain = bootstrap.static_resources.listeners[0]!.filter_chains[0] as Record<string, unknown>;
  chain.transport_socket = {
    name: 'envoy.transport_sockets.tls',
    typed_config: {
      '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext',
      common_tls_context: { tls_certificates: [{ certificate_chain: { filename: join(dir, 'cert.pem') }, private_key: { filename: join(dir, 'key.pem') } }] },
    },
  };
  writeFileSync(join(dir, 'bootstrap-tls.json'), JSON.stringify(bootstrap));
  delete chain.transport_socket;
  const profileDir = join(dir, 'profiles');
  // Forked children inherit the supervisor's execArgv, so profiling flags reach every process.
  const profiling = process.env.PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
  const startProxy = async (name: string, env: NodeJS.ProcessEnv, config = 'bootstrap.json', tree = root) => {
    const adminFile = join(dir, `${name}.admin`);
    const child = spawn(...pinned(PROXY_CORE, process.execPath, [...profiling, join(tree, 'bin/proxy.js'), '-c', join(dir, config), '--concurrency', '1', '--admin-address-path', adminFile, '--use-dynamic-base-id', '-l', 'warning']), {
      stdio: ['ignore', 'inherit', 'inherit'],
      env: { ...process.env, ...env },
    });
    children.push(child);
    const admin = await waitFor(() => (existsSync(adminFile) ? readFileSync(adminFile, 'utf8') || undefined : undefined));
    await waitFor(async () => ((await get(`http://${admin}/ready`)) === 'LIVE\n' ? true : undefined));
    return { child, port: Number(/:(\d+)\n/.exec(await get(`http://${admin}/listeners`))![1]) };
  };
  // PROFILE_FILTER=<a filter bench's name>: the proxy measured (and profiled) is that filter's.
  const { child: proxy, port } = await startProxy('proxy', {}, process.env.PROFILE_FILTER ? `bootstrap-${process.env.PROFILE_FILTER}.json` : 'bootstrap.json');
  const baseline = await startPrintingPort(children, PROXY_CORE, [join(root, 'scripts/bench/node-proxy.mjs'), String(upstream.port)]);
  // Node's floors: what a byte relay, and a proxy that does nothing but parse HTTP with llhttp, cost.
  const relay = await startPrintingPort(children, PROXY_CORE, [join(root, 'scripts/bench/node-relay.mjs'), String(upstream.port)]);
  const bare = await startPrintingPort(children, PROXY_CORE, [join(root, 'scripts/bench/node-llhttp-proxy.mjs'), String(upstream.port)]);

  console.log(`proxy benchmark: ${loadToolSummary(shape())}, ${DURATION_S} s after ${WARMUP_S} s warm-up, 256-byte responses, node ${process.version}, ${readFileSync('/proc/cpuinfo', 'utf8').match(/processor/g)?.length} cores; ${pinningSummary()}`);
  measure('upstream directly', `http://127.0.0.1:${upstream.port}/`, upstream.child.pid!);
  const ours = measure('this proxy (1 worker)', `http://127.0.0.1:${port}/`, proxy.pid!);
  measure('plain Node keep-alive proxy', `http://127.0.0.1:${baseline.port}/`, baseline.child.pid!);
  const floors = [
    { label: 'Node floor: llhttp, nothing else', r: measure('Node floor: llhttp, nothing else', `http://127.0.0.1:${bare.port}/`, bare.child.pid!) },
    { label: 'Node floor: byte relay, no HTTP', r: measure('Node floor: byte relay, no HTTP', `http://127.0.0.1:${relay.port}/`, relay.child.pid!) },
  ];
  relay.child.kill('SIGTERM');
  bare.child.kill('SIGTERM');
  // nginx and HAProxy, when installed, in the same run: where this proxy stands on this machine.
  const { peers, missing } = await startPeers(dir, upstream.port, children, (command, args) => pinned(PROXY_CORE, command, args));
  for (const peer of peers) {
    const theirs = measure(peer.label, peer.url, peer.pid);
    const times = (a: number, b: number) => `${(a / b).toFixed(2)}×`;
    console.log(`    this proxy against ${peer.label.split(',')[0]}: ${times(ours.cpuUs, theirs.cpuUs)} its CPU per request (user space ${times(ours.userUs, theirs.userUs)}, kernel ${times(ours.kernelUs, theirs.kernelUs)}), ${times(ours.p99, theirs.p99)} its p99, ${times(ours.rps, theirs.rps)} its throughput`);
    console.log(`    Node's floors against ${peer.label.split(',')[0]}: ${floors.map((f) => `${f.label.replace('Node floor: ', '')} ${times(f.r.cpuUs, theirs.cpuUs)} its CPU per request`).join('; ')}`);
  }
  for (const m of missing) console.log(`  not measured: ${m} is not installed`);
  if (!process.env.PROFILE) {
    // The cost of a feature: the plain proxy against one with the feature, both warm (the JIT needs
    // longer than one warm-up run), measured in turn and compared by their medians, since the
    // machine drifts more between runs than the difference sought.
    const rounds = Number(process.env.ROUNDS ?? 3);
    // PAIRED=1 (with wrk): each round loads both at once for the same seconds, so a drift of the
    // machine's speed (large on shared machines) weighs on both alike; each one's CPU per request
    // is still its own tree's CPU over its own requests.
    const paired = process.env.PAIRED === '1' && useWrk;
    const line = (label: string, r: LoadResult, cpuUs: number) =>
      console.log(`  ${label.padEnd(34)} ${r.rps.toFixed(0).padStart(8)} req/s   p50 ${r.p50.toFixed(2).padStart(6)} ms   p99 ${r.p99.toFixed(2).padStart(6)} ms   ${cpuUs.toFixed(1).padStart(6)} µs CPU/req   ${r.errors} errors`);
    const compare = async (title: string, labels: [string, string], a: Target, b: Target) => {
      runLoad(a.url, WARMUP_S * 2, a.close);
      runLoad(b.url, WARMUP_S * 3, b.close);
      const results = { a: [] as { rps: number; cpuUs: number }[], b: [] as { rps: number; cpuUs: number }[] };
      console.log(`\n${title}: ${rounds} ${paired ? 'paired (both loaded at once)' : 'alternating'} rounds, ${labels[0]} / ${labels[1]}`);
      for (let i = 0; i < rounds; i++) {
        if (paired) {
          const [ta, tb] = [treeCpuTicks(a.pid), treeCpuTicks(b.pid)];
          const [ra, rb] = await Promise.all([runWrkAsync(a.url, DURATION_S, a.close), runWrkAsync(b.url, DURATION_S, b.close)]);
          const cpu = (pid: number, before: number, r: LoadResult) => ((treeCpuTicks(pid) - before) * (1e6 / CLK_TCK)) / Math.max(1, r.requests);
          const [ca, cb] = [cpu(a.pid, ta, ra), cpu(b.pid, tb, rb)];
          line(`${labels[0]} (round ${i + 1})`, ra, ca);
          line(`${labels[1]} (round ${i + 1})`, rb, cb);
          results.a.push({ rps: ra.rps, cpuUs: ca });
          results.b.push({ rps: rb.rps, cpuUs: cb });
          continue;
        }
        results.a.push(measure(`${labels[0]} (round ${i + 1})`, a.url, a.pid, false, a.close));
        results.b.push(measure(`${labels[1]} (round ${i + 1})`, b.url, b.pid, false, b.close));
      }
      const [cpuA, cpuB] = [median(results.a.map((r) => r.cpuUs)), median(results.b.map((r) => r.cpuUs))];
      const [rpsA, rpsB] = [median(results.a.map((r) => r.rps)), median(results.b.map((r) => r.rps))];
      console.log(`  medians: ${labels[0]} ${rpsA.toFixed(0)} req/s ${cpuA.toFixed(1)} µs/req; ${labels[1]} ${rpsB.toFixed(0)} req/s ${cpuB.toFixed(1)} µs/req; cost ${(((cpuA - cpuB) / cpuB) * 100).toFixed(1)}% CPU per request, ${(((rpsB - rpsA) / rpsB) * 100).toFixed(1)}% throughput`);
    };
    // Each comparison's plain side is a proxy started for it, as its other side is: the table's
    // proxy has idled over a minute by then (while the peers were measured), and a worker that
    // idled that long serves dearer for a while after (shared/idle-housekeeping.ts): this tree
    // against itself read 8.8% dearer than a fresh start, paired.
    let plainRuns = 0;
    const withPlain = async (run: (plain: Target) => Promise<void>, config = 'bootstrap.json') => {
      const fresh = await startProxy(`plain-${++plainRuns}`, {}, config);
      try {
        await run({ url: `http://127.0.0.1:${fresh.port}/`, pid: fresh.child.pid! });
      } finally {
        fresh.child.kill('SIGTERM');
        await new Promise((r) => fresh.child.once('exit', r));
      }
    };
    const only = process.env.BENCH_ONLY;
    // This tree against an earlier commit's build, on the same bootstrap.
    const baselineRef = process.env.BASELINE_REF;
    if (baselineRef && (!only || only === 'baseline')) {
      const tree = buildBaseline(baselineRef);
      try {
        // BASELINE_BOOTSTRAP=<a bench bootstrap's name> (access-log, a filter's): both serve that one instead.
        const config = process.env.BASELINE_BOOTSTRAP ? `bootstrap-${process.env.BASELINE_BOOTSTRAP}.json` : 'bootstrap.json';
        const earlier = await startProxy('baseline', {}, config, tree);
        const title = `this tree against ${baselineRef}${process.env.BASELINE_BOOTSTRAP ? ` (${config})` : ''}`;
        await withPlain((plain) => compare(title, ['this tree'.padEnd(12), baselineRef.slice(0, 12).padEnd(12)], plain, { url: `http://127.0.0.1:${earlier.port}/`, pid: earlier.child.pid! }), config);
        earlier.child.kill('SIGTERM');
        await new Promise((r) => earlier.child.once('exit', r));
      } finally {
        spawnSync('git', ['worktree', 'remove', '--force', tree], { cwd: root, stdio: 'ignore' });
      }
    }
    // The cost of outlier detection: every response recorded and sent to the supervisor in batches.
    if (!only || only === 'outlier') {
      const detected = await startProxy('outlier', {}, 'bootstrap-outlier.json');
      await withPlain((plain) => compare('outlier detection cost', ['outlier detection', 'none             '], { url: `http://127.0.0.1:${detected.port}/`, pid: detected.child.pid! }, plain));
      detected.child.kill('SIGTERM');
    }
    // The cost of TLS termination (TLS 1.3, P-256 certificate, AES-GCM): on keep-alive connections
    // (the record layer), then with a handshake for every request.
    if (!only || only === 'tls') {
      const tls = await startProxy('tls', {}, 'bootstrap-tls.json');
      const secure = { url: `https://127.0.0.1:${tls.port}/`, pid: tls.child.pid! };
      await withPlain(async (plain) => {
        await compare('TLS termination cost (keep-alive)', ['TLS      ', 'plaintext'], secure, plain);
        await compare('TLS termination cost (a connection per request)', ['TLS      ', 'plaintext'], { ...secure, close: true }, { ...plain, close: true });
      });
      tls.child.kill('SIGTERM');
    }
    // The cost of tracing (Zipkin, a span per request at 100 %; the decision and propagation only for the 99 % left out at 1 %).
    if (!only || only === 'tracing') {
      for (const percent of [100, 1]) {
        const traced = await startProxy(`tracing-${percent}`, {}, `bootstrap-tracing-${percent}.json`);
        await withPlain((plain) => compare(`tracing cost (Zipkin, ${percent} % sampled)`, [`tracing ${percent}%`.padEnd(12), 'no tracing'.padEnd(12)], { url: `http://127.0.0.1:${traced.port}/`, pid: traced.child.pid! }, plain));
        traced.child.kill('SIGTERM');
      }
    }
    // The cost of each HTTP filter in FILTER_BENCHES, against the proxy without it.
    for (const [name, bench] of Object.entries(FILTER_BENCHES)) {
      if (only && only !== name) continue;
      const filtered = await startProxy(name, {}, `bootstrap-${name}.json`);
      await withPlain((plain) => compare(`${name} filter cost (${bench.what})`, [name.padEnd(15), 'none'.padEnd(15)], { url: `http://127.0.0.1:${filtered.port}/`, pid: filtered.child.pid! }, plain));
      filtered.child.kill('SIGTERM');
    }
    // The cost of statistics: the same proxy with every stat inert (PROXY_BENCH_STATS=off).
    if (!only || only === 'stats') {
      const inert = await startProxy('inert', { PROXY_BENCH_STATS: 'off' });
      await withPlain((plain) => compare('statistics cost', ['stats on ', 'stats off'], plain, { url: `http://127.0.0.1:${inert.port}/`, pid: inert.child.pid! }));
      inert.child.kill('SIGTERM');
    }
    // The cost of a statsd sink: each request's histogram samples sent as datagrams when recorded.
    if (!only || only === 'statsd') {
      const sinking = await startProxy('statsd', {}, 'bootstrap-statsd.json');
      await withPlain((plain) => compare('statsd sink cost (samples sent when recorded)', ['statsd sink', 'no sink    '], { url: `http://127.0.0.1:${sinking.port}/`, pid: sinking.child.pid! }, plain));
      sinking.child.kill('SIGTERM');
      console.log(`  statsd: ${statsdDatagrams} datagrams received`);
    }
    // The cost of an access log: every request written to a file in Envoy's default format.
    if (!only || only === 'access-log') {
      const logged = await startProxy('access-log', {}, 'bootstrap-access-log.json');
      await withPlain((plain) => compare('access log cost', ['access log', 'no log    '], { url: `http://127.0.0.1:${logged.port}/`, pid: logged.child.pid! }, plain));
      logged.child.kill('SIGTERM');
      await new Promise((r) => logged.child.once('exit', r));
      const logLines = readFileSync(join(dir, 'access.log'), 'utf8').split('\n').filter(Boolean);
      console.log(`  access log: ${logLines.length} lines written, e.g. ${logLines[logLines.length - 1]}`);
    }
    if (only) throw Object.assign(new Error('done'), { done: true });
  }

  if (process.env.PROFILE) {
    proxy.kill('SIGTERM');
    await new Promise((r) => proxy.once('exit', r));
    const files = readdirSync(profileDir).map((f) => join(profileDir, f));
    type Profile = { nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[]; samples: number[]; timeDeltas: number[] };
    const busy = (p: Profile) => {
      const idle = new Set(p.nodes.filter((n) => n.callFrame.functionName === '(idle)').map((n) => n.id));
      return p.samples.reduce((sum, id, i) => sum + (idle.has(id) ? 0 : p.timeDeltas[i]!), 0);
    };
    // The worker's profile is the busiest one (the supervisor and admin process idle during the load).
    const profiles = files.map((f) => JSON.parse(readFileSync(f, 'utf8')) as Profile);
    // Frames of a role's bundle, named by the sources they came from.
    const worker = mapProfileToSources(profiles.sort((a, b) => busy(b) - busy(a))[0]!) as Profile;
    const self = new Map<string, number>();
    const byId = new Map(worker.nodes.map((n) => [n.id, n]));
    let total = 0;
    worker.samples.forEach((id, i) => {
      const f = byId.get(id)!.callFrame;
      if (f.functionName === '(idle)') return;
      const key = `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*\/(node_modules\/|dist\/)/, '$1').replace(`file://${root}/`, '').replace(/^node:/, '')}:${f.lineNumber + 1}`;
      self.set(key, (self.get(key) ?? 0) + worker.timeDeltas[i]!);
      total += worker.timeDeltas[i]!;
    });
    // The statistics' own share of the worker (counters, gauges, histograms and the scopes that hold them): a figure the machine's drift does not move.
    let statsTime = 0;
    worker.samples.forEach((id, i) => {
      if (/\/shared\/stats\//.test(byId.get(id)!.callFrame.url)) statsTime += worker.timeDeltas[i]!;
    });
    console.log(`\nstatistics code (shared/stats/): ${((statsTime / total) * 100).toFixed(1)}% of the worker's busy time`);
    console.log(`\nworker CPU profile (self time, top 20 of ${(total / 1000).toFixed(0)} ms busy); profiles in ${profileDir}`);
    for (const [k, v] of [...self].sort((x, y) => y[1] - x[1]).slice(0, 20)) console.log(`  ${((v / total) * 100).toFixed(1).padStart(5)}%  ${k}`);
  }
} catch (err) {
  if (!(err as { done?: boolean }).done) throw err;
} finally {
  for (const c of children) if (c.exitCode === null) c.kill('SIGTERM');
  if (!process.env.PROFILE) rmSync(dir, { recursive: true, force: true });
}
