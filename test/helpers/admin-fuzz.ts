import { connect } from 'node:net';

/**
 * Fuzzed requests to the admin interface, seeded so that a failure replays: methods other than
 * POST to every endpoint (a mutating one must answer 400 and change nothing), and any method to
 * the read-only ones, with broken paths, unknown and known parameters holding hostile values
 * (bad regexes, broken escapes, NULs, 5,000-character strings, huge numbers) and stray headers
 * and bodies. The endpoints and their parameters are read from the admin's own /help.
 * Used by test/admin-fuzz.test.ts (a few hundred) and scripts/probe-hostile.ts (ten thousand).
 */

export interface FuzzOutcome {
  requests: number;
  /** How many answers had each status (0: the connection closed without one). */
  statuses: Map<number, number>;
  /** Requests that got a 5xx, or no answer at all: each is a finding. */
  failures: string[];
}

interface Endpoint {
  path: string;
  mutates: boolean;
  params: string[];
}

/** Endpoints never fuzzed: a V8 heap snapshot per request, and a stream that never ends. */
const SKIP = new Set(['/heap_dump', '/dashboard_event_stream', '/hystrix_event_stream']);

const VALUES = [
  '', 'json', 'text', 'html', 'prometheus', 'true', 'false', '1', '-1', '0x10', 'NaN', '99999999999999999999999', '1e308',
  '(', '[a-', '\\', '*', '.*', '(a+)+$', '%zz', '%00', '%', '%%', '%c0%af', '日本語', '<script>alert(1)</script>', "'\"",
  'a'.repeat(5000), 'router:debug', 'upstream=trace', 'x=y=z', ',,,', 'cumulative', 'disjoint', 'detailed', 'summary', 'none',
  'Used', 'All', 'listeners', 'dynamic_active_clusters', 'worker_0', 'admin', 'main', '../../etc/passwd',
];

export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function parseHelp(help: string): Endpoint[] {
  const endpoints: Endpoint[] = [];
  for (const line of help.split('\n')) {
    const e = /^ {2}(\/\S*)( \(POST\))?: /.exec(line);
    if (e) {
      endpoints.push({ path: e[1]!, mutates: e[2] !== undefined, params: [] });
      continue;
    }
    const p = /^ {6}([A-Za-z_][\w-]*): /.exec(line);
    if (p && endpoints.length) endpoints.at(-1)!.params.push(p[1]!);
  }
  return endpoints.filter((e) => !SKIP.has(e.path));
}

function rawRequest(host: string, port: number, bytes: Buffer): Promise<number> {
  return new Promise((resolve) => {
    let head = '';
    let settled = false;
    const done = (status: number) => {
      if (settled) return;
      settled = true;
      s.destroy();
      resolve(status);
    };
    // Not end(): a client's half-close ends an HTTP/1 connection before its answer, in Envoy too.
    const s = connect(port, host, () => s.write(bytes));
    s.setTimeout(30_000, () => done(0));
    s.on('data', (d: Buffer) => {
      head += d.toString('latin1');
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(head);
      if (m) done(Number(m[1]));
      else if (head.length > 64) done(0);
    });
    s.on('error', () => done(0));
    s.on('close', () => done(0));
  });
}

/** One fuzzed request: its bytes and a short description for a finding. */
export function fuzzedRequest(endpoints: Endpoint[], random: () => number): { bytes: Buffer; describe: string } {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
  const endpoint = pick(endpoints);
  const methods = endpoint.mutates ? ['GET', 'GET', 'HEAD', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'BREW'] : ['GET', 'GET', 'GET', 'HEAD', 'POST', 'PUT', 'OPTIONS', 'BREW'];
  const method = pick(methods);
  let path = endpoint.path;
  const shape = random();
  if (shape < 0.08) path += '/';
  else if (shape < 0.14) path = `/${path}`;
  else if (shape < 0.2) path += pick(['%2F', '/../', '/..%2f', ';x', '#frag', '%00', '\u00ff']);
  else if (shape < 0.24) path = `/${'x'.repeat(Math.floor(random() * 8000))}`;
  const names = [...endpoint.params, 'filter', 'format', 'usedonly', 'type', 'mask', 'resource', 'include_eds', 'process', 'paths', 'level', 'x', ''];
  const query = Array.from({ length: Math.floor(random() * 5) }, () => {
    const value = pick(VALUES);
    return random() < 0.5 ? `${pick(names)}=${encodeURIComponent(value)}` : `${pick(names)}=${value.replace(/[\s#]/g, '')}`;
  }).join('&');
  const target = query ? `${path}?${query}` : path;
  const headers = ['Host: 127.0.0.1', 'Connection: close'];
  if (random() < 0.1) headers.push(`X-Big: ${'h'.repeat(Math.floor(random() * 20000))}`);
  if (random() < 0.1) headers.push(pick(['Content-Type: application/json', 'Accept: text/html', 'Accept-Encoding: gzip', 'Expect: 100-continue', 'Origin: http://evil.example']));
  let body = '';
  if (method !== 'GET' && method !== 'HEAD' && random() < 0.5) {
    body = pick(['{}', '{"a":', 'null', '[1,2,3]', 'x'.repeat(10000), '\u0000\u0001\u0002', 'key=value&other=1']);
    headers.push(`Content-Length: ${Buffer.byteLength(body)}`);
  }
  const bytes = Buffer.from(`${method} ${target} HTTP/1.1\r\n${headers.join('\r\n')}\r\n\r\n${body}`, 'utf8');
  return { bytes, describe: `${method} ${target.slice(0, 120)}${target.length > 120 ? '…' : ''}` };
}

/**
 * Sends `count` fuzzed requests, `concurrency` at a time; a 5xx or a missing answer is a failure,
 * but for Envoy's own 501 of /memory/tcmalloc (a build without tcmalloc).
 */
export async function fuzzAdmin(admin: string, helpBody: string, count: number, seed: number, concurrency = 8): Promise<FuzzOutcome> {
  const [host, portText] = [admin.slice(0, admin.lastIndexOf(':')), admin.slice(admin.lastIndexOf(':') + 1)];
  const endpoints = parseHelp(helpBody);
  const random = seededRandom(seed);
  const outcome: FuzzOutcome = { requests: 0, statuses: new Map(), failures: [] };
  let next = 0;
  const worker = async () => {
    while (next < count) {
      next++;
      const { bytes, describe } = fuzzedRequest(endpoints, random);
      const status = await rawRequest(host, Number(portText), bytes);
      outcome.requests++;
      outcome.statuses.set(status, (outcome.statuses.get(status) ?? 0) + 1);
      // The fuzz also doubles slashes, which the admin merges.
      const expected501 = status === 501 && / \/+memory\/+tcmalloc(\?|$)/.test(describe);
      if (status === 0 || (status >= 500 && !expected501)) outcome.failures.push(`${status} for ${describe}`);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return outcome;
}
