import { connect } from 'node:net';
import { seededRandom } from './admin-fuzz.js';
import { hcmFilter, staticCluster } from './bootstraps.js';
import { frame, PREFACE } from './http2-abuse.js';

/**
 * Fuzzed downstream connections, seeded so that a finding replays (issue 39): HTTP/1 requests
 * built from valid ones (pipelined, chunked, upgrades, CONNECT, absolute targets, other versions)
 * and mutated (bytes flipped, inserted, deleted, repeated, line endings broken, framing tokens
 * spliced in, cut short), and HTTP/2 connections of frames built from a valid request (HEADERS with
 * HPACK literals, DATA, SETTINGS, WINDOW_UPDATE, PRIORITY, RST_STREAM, PING, CONTINUATION, GOAWAY,
 * unknown types) and mutated in their type, flags, stream id, length and payload. What the proxy
 * answers is its own business (400, 426, a GOAWAY, a reset, a response); what it must never do is
 * lose a process. Used by test/downstream-fuzz.test.ts (a few hundred vectors) and
 * scripts/fuzz-downstream.ts (a minute's worth).
 */

export interface FuzzVector {
  protocol: 'h1' | 'h2';
  bytes: Buffer;
  /** Half-close after writing (a client that is done), or keep the connection open until the proxy closes it or the deadline. */
  halfClose: boolean;
  describe: string;
}

/** What a connection got: the first status line's code, `h2` for HTTP/2 frames, `closed` for nothing, `held` when the deadline came first. */
export type Answer = number | 'h2' | 'closed' | 'held';

const HOST = 'Host: fuzz.test\r\n';

/** Valid HTTP/1 requests the mutations start from: each path through the connection manager a client can take. */
const H1_SEEDS: readonly string[] = [
  `GET / HTTP/1.1\r\n${HOST}\r\n`,
  `GET /up HTTP/1.1\r\n${HOST}User-Agent: fuzz\r\nAccept: */*\r\n\r\n`,
  `POST /up HTTP/1.1\r\n${HOST}Content-Length: 5\r\n\r\nhello`,
  `POST /up HTTP/1.1\r\n${HOST}Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\nX-Trailer: t\r\n\r\n`,
  `GET / HTTP/1.1\r\n${HOST}\r\nGET /up HTTP/1.1\r\n${HOST}\r\nGET / HTTP/1.1\r\n${HOST}Connection: close\r\n\r\n`,
  `GET /up HTTP/1.1\r\n${HOST}Connection: close\r\n\r\nGET / HTTP/1.1\r\n${HOST}\r\n`,
  `GET /ws HTTP/1.1\r\n${HOST}Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n\x81\x85\x37\xfa\x21\x3d\x7f\x9f\x4d\x51\x58`,
  `CONNECT fuzz.test:443 HTTP/1.1\r\n${HOST}\r\nhello`,
  `GET http://fuzz.test/up?x=1 HTTP/1.1\r\n${HOST}\r\n`,
  'GET / HTTP/1.0\r\n\r\n',
  `GET / HTTP/2.0\r\n${HOST}\r\n`,
  'GET /\r\n\r\n',
  `OPTIONS * HTTP/1.1\r\n${HOST}\r\n`,
  `PUT /up HTTP/1.1\r\n${HOST}Expect: 100-continue\r\nContent-Length: 3\r\n\r\nabc`,
  `GET / HTTP/1.1\r\n${HOST}Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\n`,
  `HEAD /up HTTP/1.1\r\n${HOST}\r\n`,
  `GET /up HTTP/1.1\r\n${HOST}X-Envoy-Retry-On: 5xx\r\nX-Forwarded-For: 10.0.0.1\r\nX-Request-Id: abc\r\n\r\n`,
];

/** Tokens spliced into requests: framing, versions, separators, the characters parsers trip on. */
const H1_TOKENS: readonly string[] = [
  'HTTP/2.0', 'HTTP/0.9', 'HTTP/1.0', 'HTTP/1.2', 'HTTP/3.0', 'HTTP/11', 'http/1.1', '\r\n', '\n', '\r', ' ', '\t', ':', '\0', '\x7f', '\xff', '\x80',
  'Transfer-Encoding: chunked\r\n', 'Transfer-Encoding: gzip, chunked\r\n', 'Transfer-Encoding: identity\r\n', 'Transfer-Encoding: chunked, identity\r\n',
  'Content-Length: 5\r\n', 'Content-Length: -1\r\n', 'Content-Length: 5, 6\r\n', 'Content-Length: 99999999999999999999\r\n', 'Connection: close\r\n',
  'Connection: keep-alive\r\n', 'Upgrade: websocket\r\nConnection: upgrade\r\n', 'Expect: 100-continue\r\n', 'Expect: nonsense\r\n', 'Host: other\r\n', '0\r\n\r\n',
  'ffffffff\r\n', '5;ext=1\r\n', PREFACE.toString('latin1'), ' HTTP/1.1\r\n', 'GET ', 'CONNECT ', '%00', '%2e%2e/', '/../', '?', '#', 'Te: trailers\r\n',
  ':authority: x\r\n', 'X-Envoy-Original-Path: /\r\n', 'Keep-Alive: timeout=1\r\n',
];

/** HPACK: an integer with an N-bit prefix (RFC 7541 §5.1). */
function hpackInteger(value: number, prefixBits: number, firstByte: number): number[] {
  const max = (1 << prefixBits) - 1;
  if (value < max) return [firstByte | value];
  const out = [firstByte | max];
  let rest = value - max;
  while (rest >= 128) {
    out.push((rest % 128) + 128);
    rest = Math.floor(rest / 128);
  }
  out.push(rest);
  return out;
}

/** HPACK: a header block of literal fields without indexing, names and values not Huffman-coded. */
export function hpackLiterals(fields: readonly [string, string][]): Buffer {
  const bytes: number[] = [];
  for (const [name, value] of fields) {
    bytes.push(0x00);
    for (const s of [name, value]) {
      const b = Buffer.from(s, 'latin1');
      bytes.push(...hpackInteger(b.length, 7, 0x00), ...b);
    }
  }
  return Buffer.from(bytes);
}

const H2_REQUEST: readonly [string, string][] = [
  [':method', 'GET'],
  [':scheme', 'http'],
  [':authority', 'fuzz.test'],
  [':path', '/up'],
];

/** Header fields spliced into an HTTP/2 request: what the codec or the connection manager must refuse, and what it must carry. */
const H2_FIELDS: readonly [string, string][] = [
  [':method', 'POST'], [':method', 'CONNECT'], [':protocol', 'websocket'], [':path', ''], [':path', '*'], [':path', 'nonsense'], [':status', '200'],
  [':authority', ''], [':scheme', 'https'], ['connection', 'keep-alive'], ['te', 'gzip'], ['te', 'trailers'], ['transfer-encoding', 'chunked'],
  ['Upper-Case', 'x'], ['content-length', '3'], ['content-length', '-1'], ['host', 'other'], ['x-bad', 'a\r\nb'], ['', 'empty'], ['cookie', 'a=1'],
  ['x-envoy-retry-on', 'reset'], ['x-long', 'v'.repeat(5000)],
];

function pick<T>(random: () => number, xs: readonly T[]): T {
  return xs[Math.floor(random() * xs.length)]!;
}

function int(random: () => number, below: number): number {
  return Math.floor(random() * below);
}

function mutateBytes(random: () => number, input: Buffer, tokens: readonly string[]): Buffer {
  let b = input;
  const rounds = int(random, 4);
  for (let r = 0; r < rounds; r++) {
    const at = int(random, b.length + 1);
    switch (int(random, 8)) {
      case 0: // a byte flipped
        if (b.length) {
          b = Buffer.from(b);
          b[Math.min(at, b.length - 1)] = int(random, 256);
        }
        break;
      case 1: // a token spliced in
        b = Buffer.concat([b.subarray(0, at), Buffer.from(pick(random, tokens), 'latin1'), b.subarray(at)]);
        break;
      case 2: // a range deleted
        b = Buffer.concat([b.subarray(0, at), b.subarray(at + 1 + int(random, 16))]);
        break;
      case 3: // a range repeated
        {
          const len = 1 + int(random, 32);
          b = Buffer.concat([b.subarray(0, at + len), b.subarray(at, at + len), b.subarray(at + len)]);
        }
        break;
      case 4: // cut short
        b = b.subarray(0, at);
        break;
      case 5: // line endings broken
        b = Buffer.from(b.toString('latin1').replace(random() < 0.5 ? /\r\n/ : /\r\n/g, pick(random, ['\n', '\r', '\r\r\n', '\n\r'])), 'latin1');
        break;
      case 6: // a random byte inserted
        b = Buffer.concat([b.subarray(0, at), Buffer.from([int(random, 256)]), b.subarray(at)]);
        break;
      default: // a header too large for max_request_headers_kb, now and then
        if (random() < 0.2) b = Buffer.concat([b.subarray(0, at), Buffer.from(`X-Big: ${'b'.repeat(int(random, 70_000))}\r\n`), b.subarray(at)]);
    }
  }
  return b;
}

/** One fuzzed HTTP/1 connection's bytes. */
export function http1Vector(random: () => number): FuzzVector {
  const seedIndex = int(random, H1_SEEDS.length);
  const seed = Buffer.from(H1_SEEDS[seedIndex]!, 'latin1');
  const bytes = random() < 0.1 ? seed : mutateBytes(random, seed, H1_TOKENS);
  return { protocol: 'h1', bytes, halfClose: random() < 0.4, describe: `h1 seed ${seedIndex}: ${JSON.stringify(bytes.toString('latin1').slice(0, 160))}` };
}

/** A frame of the connection, valid or not. */
function h2Frame(random: () => number, stream: number): Buffer {
  const fields = [...H2_REQUEST];
  const extra = int(random, 3);
  for (let i = 0; i < extra; i++) fields.splice(int(random, fields.length + 1), random() < 0.3 ? 1 : 0, pick(random, H2_FIELDS));
  const headers = hpackLiterals(fields);
  switch (int(random, 12)) {
    case 0:
    case 1:
    case 2: // HEADERS, END_HEADERS, END_STREAM or not
      return frame(1, 0x04 | (random() < 0.6 ? 0x01 : 0), stream, headers);
    case 3: // HEADERS split across CONTINUATION
      {
        const cut = int(random, headers.length);
        return Buffer.concat([frame(1, random() < 0.5 ? 0x01 : 0, stream, headers.subarray(0, cut)), frame(9, random() < 0.8 ? 0x04 : 0, random() < 0.9 ? stream : stream + 2, headers.subarray(cut))]);
      }
    case 4: // DATA
      return frame(0, random() < 0.5 ? 0x01 : 0, random() < 0.9 ? stream : 0, Buffer.alloc(int(random, 20_000), 0x61));
    case 5: // SETTINGS (or its ACK), random identifiers and values
      {
        const n = int(random, 4);
        const payload = Buffer.alloc(n * 6);
        for (let i = 0; i < n; i++) {
          payload.writeUInt16BE(1 + int(random, 9), i * 6);
          payload.writeUInt32BE(pick(random, [0, 1, 100, 16_384, 65_535, 2 ** 31 - 1, 2 ** 31, 2 ** 32 - 1]), i * 6 + 2);
        }
        return frame(4, random() < 0.2 ? 0x01 : 0, random() < 0.9 ? 0 : stream, payload);
      }
    case 6: // WINDOW_UPDATE
      {
        const payload = Buffer.alloc(4);
        payload.writeUInt32BE(pick(random, [0, 1, 65_535, 2 ** 31 - 1]), 0);
        return frame(8, 0, random() < 0.5 ? 0 : stream, payload);
      }
    case 7: // PRIORITY, perhaps on itself
      {
        const payload = Buffer.alloc(5);
        payload.writeUInt32BE(random() < 0.3 ? stream : int(random, 10), 0);
        payload[4] = int(random, 256);
        return frame(2, 0, stream, payload);
      }
    case 8: // RST_STREAM
      {
        const payload = Buffer.alloc(4);
        payload.writeUInt32BE(int(random, 14), 0);
        return frame(3, 0, random() < 0.8 ? stream : 0, payload);
      }
    case 9: // PING
      return frame(6, random() < 0.3 ? 0x01 : 0, random() < 0.9 ? 0 : stream, Buffer.alloc(random() < 0.9 ? 8 : int(random, 16)));
    case 10: // GOAWAY
      return frame(7, 0, 0, Buffer.alloc(8));
    default: // a type no one knows, or PUSH_PROMISE from a client
      return frame(random() < 0.5 ? 5 : 10 + int(random, 200), int(random, 256), stream, Buffer.alloc(int(random, 64), int(random, 256)));
  }
}

/** One fuzzed HTTP/2 connection: the preface, SETTINGS, then frames on client streams; some mutated in their header or payload. */
export function http2Vector(random: () => number): FuzzVector {
  const parts: Buffer[] = [random() < 0.95 ? PREFACE : PREFACE.subarray(0, int(random, PREFACE.length)), frame(4, 0, 0)];
  const frames = 1 + int(random, random() < 0.1 ? 300 : 8);
  let stream = 1;
  for (let i = 0; i < frames; i++) {
    let f = h2Frame(random, stream);
    if (random() < 0.15) {
      // The frame header lies: its length, type, flags or stream.
      f = Buffer.from(f);
      const field = int(random, 4);
      if (field === 0) f.writeUIntBE(int(random, 1 << 24), 0, 3);
      else if (field === 1) f[3] = int(random, 256);
      else if (field === 2) f[4] = int(random, 256);
      else f.writeUInt32BE(int(random, 2 ** 32), 5);
    } else if (random() < 0.1) f = Buffer.concat([f.subarray(0, 9), mutateBytes(random, f.subarray(9), ['\0', '\xff', '\x80', '\x3f\xe1\x1f'])]);
    parts.push(f);
    if (random() < 0.5) stream += 2;
  }
  const bytes = Buffer.concat(parts);
  return { protocol: 'h2', bytes, halfClose: random() < 0.3, describe: `h2 ${frames} frames: ${bytes.subarray(PREFACE.length).toString('hex').slice(0, 160)}` };
}

/** Two listeners over the same routes (a direct answer, a cluster, upgrades and CONNECT): one refusing HTTP/1.0 as Envoy does by default, one accepting it, with few HTTP/2 streams. */
export function fuzzBootstrap(upstreamPort: number): object {
  const routes = [
    { match: { prefix: '/up' }, route: { cluster: 'up', timeout: '2s' } },
    { match: { prefix: '/ws' }, route: { cluster: 'up' } },
    { match: { connect_matcher: {} }, route: { cluster: 'up' } },
    { match: { prefix: '/' }, direct_response: { status: 200, body: { inline_string: 'probe' } } },
  ];
  const listener = (name: string, extra: object) => {
    const hcm = hcmFilter(name, routes);
    Object.assign(hcm.typed_config as object, { upgrade_configs: [{ upgrade_type: 'websocket' }, { upgrade_type: 'CONNECT' }], ...extra });
    return { name, address: { socket_address: { address: '127.0.0.1', port_value: 0 } }, filter_chains: [{ filters: [hcm] }] };
  };
  return {
    admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
    static_resources: {
      listeners: [listener('strict', {}), listener('lenient', { http_protocol_options: { accept_http_10: true, default_host_for_http_10: 'fuzz.test' }, http2_protocol_options: { max_concurrent_streams: 8 } })],
      clusters: [staticCluster('up', upstreamPort)],
    },
  };
}

/** Writes one vector on a new connection and reads until the proxy closes it or `deadlineMs` passes (then the client closes it). */
export function sendFuzzVector(port: number, vector: FuzzVector, deadlineMs: number): Promise<Answer> {
  return new Promise((resolve) => {
    let head: Buffer | undefined;
    let settled = false;
    const done = (answer: Answer) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      s.destroy();
      resolve(answer);
    };
    const answer = (): Answer => {
      if (!head) return 'closed';
      if (vector.protocol === 'h2' && head.length >= 9 && head[3] === 4) return 'h2';
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(head.toString('latin1', 0, 16));
      return m ? Number(m[1]) : 'closed';
    };
    const s = connect(port, '127.0.0.1', () => {
      s.write(vector.bytes);
      if (vector.halfClose) s.end();
    });
    const deadline = setTimeout(() => done(head ? answer() : 'held'), deadlineMs);
    s.on('data', (d: Buffer) => {
      if (!head || head.length < 16) head = head ? Buffer.concat([head, d]) : d;
    });
    s.on('error', () => done(answer()));
    s.on('close', () => done(answer()));
  });
}

export interface DownstreamFuzzOutcome {
  vectors: number;
  h1: number;
  h2: number;
  /** How many connections got each answer. */
  answers: Map<Answer, number>;
}

export interface DownstreamFuzzOptions {
  seed: number;
  /** Stop after this many vectors… */
  count?: number;
  /** …or when this time (ms since the call) is reached. */
  until?: number;
  concurrency?: number;
  /** How long a connection is given to be answered or closed by the proxy. */
  deadlineMs?: number;
  /** Called after every `checkEvery` vectors (all answered): a check that the proxy is whole, which throws if not. */
  check?: (outcome: DownstreamFuzzOutcome) => Promise<void>;
  checkEvery?: number;
  /** The vector that is about to be sent, for a finding to name. */
  onVector?: (vector: FuzzVector) => void;
}

/** Sends fuzzed HTTP/1 and HTTP/2 connections to `port`, in batches of `concurrency`, checking the proxy between batches. */
export async function fuzzDownstream(port: number, options: DownstreamFuzzOptions): Promise<DownstreamFuzzOutcome> {
  const random = seededRandom(options.seed);
  const concurrency = options.concurrency ?? 16;
  const checkEvery = options.checkEvery ?? 200;
  const started = Date.now();
  const outcome: DownstreamFuzzOutcome = { vectors: 0, h1: 0, h2: 0, answers: new Map() };
  const more = () => (options.count === undefined || outcome.vectors < options.count) && (options.until === undefined || Date.now() - started < options.until);
  let sinceCheck = 0;
  while (more()) {
    const batch: FuzzVector[] = [];
    while (batch.length < concurrency && (options.count === undefined || outcome.vectors + batch.length < options.count)) batch.push(random() < 0.6 ? http1Vector(random) : http2Vector(random));
    for (const v of batch) options.onVector?.(v);
    const answers = await Promise.all(batch.map((v) => sendFuzzVector(port, v, options.deadlineMs ?? 2000)));
    for (let i = 0; i < batch.length; i++) {
      outcome.vectors++;
      outcome[batch[i]!.protocol]++;
      outcome.answers.set(answers[i]!, (outcome.answers.get(answers[i]!) ?? 0) + 1);
    }
    sinceCheck += batch.length;
    if (options.check && (sinceCheck >= checkEvery || !more())) {
      sinceCheck = 0;
      await options.check(outcome);
    }
  }
  return outcome;
}
