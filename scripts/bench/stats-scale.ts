// /stats, /stats/prometheus, /clusters and /config_dump on a bootstrap of CLUSTERS static clusters
// (default 6,000) and 2 workers, timed to the last byte through the admin interface, and /ready's
// and /server_info's latency measured while each large response is being served. Each cluster
// brings about 83 stats (merged over the workers): 6,000 clusters are about 500,000 stats,
// CLUSTERS=1200 about 100,000 and CLUSTERS=2400 about 200,000 (the sizes issue 18's goals name).
// Prints figures; asserts nothing.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const CLUSTERS = Number(process.env.CLUSTERS ?? 6000);
const RUNS = Number(process.env.RUNS ?? 5);
const root = join(import.meta.dirname, '../..');
const dir = mkdtempSync(join(tmpdir(), 'bench-stats-'));
let proxy: ChildProcess | undefined;

const agent = new Agent({ keepAlive: false });

function get(url: string): Promise<{ ms: number; bytes: number; lines: number; body: string }> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    request(url, { agent }, (res) => {
      const chunks: Buffer[] = [];
      let lines = 0;
      res.on('data', (d: Buffer) => {
        chunks.push(d);
        for (let i = d.indexOf(10); i >= 0; i = d.indexOf(10, i + 1)) lines++;
      });
      res.on('end', () => {
        const body = Buffer.concat(chunks);
        resolve({ ms: performance.now() - t0, bytes: body.length, lines, body: body.length < 1_000_000 ? body.toString() : '' });
      });
    }).on('error', reject).end();
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

try {
  const endpoint = { lb_endpoints: [{ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: 9 } } } }] };
  const bootstrap = {
    admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
    static_resources: {
      clusters: Array.from({ length: CLUSTERS }, (_, i) => ({ name: `service_${i}`, type: 'STATIC', connect_timeout: '1s', load_assignment: { cluster_name: `service_${i}`, endpoints: [endpoint] } })),
    },
  };
  writeFileSync(join(dir, 'bootstrap.json'), JSON.stringify(bootstrap));
  const adminFile = join(dir, 'admin');
  proxy = spawn(process.execPath, [join(root, 'bin/proxy.js'), '-c', join(dir, 'bootstrap.json'), '--concurrency', '2', '--admin-address-path', adminFile, '--use-dynamic-base-id', '-l', 'warning'], { stdio: 'inherit' });
  let admin = '';
  for (let i = 0; i < 600 && !admin; i++) {
    if (existsSync(adminFile)) admin = readFileSync(adminFile, 'utf8');
    await new Promise((r) => setTimeout(r, 50));
  }
  for (let i = 0; i < 600; i++) {
    if ((await get(`http://${admin}/ready`)).body === 'LIVE\n') break;
    await new Promise((r) => setTimeout(r, 50));
  }
  await get(`http://${admin}/stats`); // the first, largest collection, and the sorted name cache
  const count = (await get(`http://${admin}/stats`)).lines;
  console.log(`stats at scale: ${CLUSTERS} clusters, 2 workers: ${count.toLocaleString('en')} stats; median of ${RUNS}, node ${process.version}`);
  for (const [label, path] of [
    ['/stats', '/stats'],
    ['/stats?format=json', '/stats?format=json'],
    ['/stats/prometheus', '/stats/prometheus'],
    ['/stats?usedonly', '/stats?usedonly'],
    ['/stats?filter=service_42\\.', '/stats?filter=service_42%5C.'],
    ['/clusters', '/clusters'],
    ['/clusters?format=json', '/clusters?format=json'],
    ['/config_dump', '/config_dump'],
    ['/config_dump?include_eds', '/config_dump?include_eds'],
  ] as const) {
    const runs: { ms: number; bytes: number }[] = [];
    for (let i = 0; i < RUNS; i++) runs.push(await get(`http://${admin}${path}`));
    console.log(`  ${label.padEnd(30)} ${median(runs.map((r) => r.ms)).toFixed(0).padStart(6)} ms   ${(runs[0]!.bytes / 1048576).toFixed(2).padStart(6)} MiB`);
  }
  // /ready and /server_info, polled one after the other while a large response streams to
  // another process (curl): parsing 15 MiB in this process would delay its own probes and
  // measure the client, not the proxy. Issue 18's goal: 20 ms at most.
  console.log(`  /ready and /server_info while a large response streams (${RUNS} downloads each; goal: 20 ms max):`);
  for (const path of ['/stats', '/stats/prometheus', '/stats?format=json', '/clusters', '/config_dump']) {
    const probes: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const curl = spawn('curl', ['-s', '-o', '/dev/null', `http://${admin}${path}`]);
      let downloading = true;
      curl.on('exit', () => (downloading = false));
      for (let k = 0; downloading; k++) probes.push((await get(`http://${admin}${k % 2 ? '/server_info' : '/ready'}`)).ms);
    }
    probes.sort((a, b) => a - b);
    console.log(`    during ${path.padEnd(22)} ${String(probes.length).padStart(5)} probes, median ${median(probes).toFixed(1).padStart(5)} ms, max ${probes[probes.length - 1]!.toFixed(1).padStart(6)} ms`);
  }
} finally {
  proxy?.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
}
