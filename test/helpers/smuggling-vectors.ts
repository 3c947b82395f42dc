import { connect } from 'node:net';
import { withDeadline } from './proxy.js';

/**
 * Request-smuggling vectors (issue 13): each hides `GET /smuggled` where a correct HTTP/1.1 parser
 * sees no request — inside a body, or behind framing that must be refused. Shared by
 * test/smuggling.test.ts and scripts/probe-hostile.ts.
 */

const SMUGGLED = 'GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n';
export const SENTINEL = 'GET /sentinel HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n';

export interface Vector {
  name: string;
  bytes: string;
  /** `refused`: `status` (400 unless given), nothing of it forwarded. `served`: the first request is answered 200. */
  expect: 'refused' | 'served';
  /** A refusal's status: Envoy's codec answers a transfer coding other than a lone `chunked` with 501, before it looks at Content-Length. */
  status?: number;
}

const chunked = (body: string) => `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`;
const post = (headers: string, body: string) => `POST /vector HTTP/1.1\r\nHost: x\r\n${headers}\r\n${body}`;

export const VECTORS: Vector[] = [
  // Content-Length and Transfer-Encoding together: which one frames the body is the whole attack.
  { name: 'CL.TE', bytes: post(`Content-Length: ${5 + SMUGGLED.length}\r\nTransfer-Encoding: chunked\r\n`, `0\r\n\r\n${SMUGGLED}`), expect: 'refused' },
  { name: 'TE.CL', bytes: post('Transfer-Encoding: chunked\r\nContent-Length: 4\r\n', chunked(SMUGGLED)), expect: 'refused' },
  { name: 'TE.CL with TE last', bytes: post('Content-Length: 4\r\nTransfer-Encoding: chunked\r\n', chunked(SMUGGLED)), expect: 'refused' },
  { name: 'TE with a space before the colon', bytes: post(`Content-Length: ${5 + SMUGGLED.length}\r\nTransfer-Encoding : chunked\r\n`, `0\r\n\r\n${SMUGGLED}`), expect: 'refused' },
  { name: 'TE with a tab', bytes: post(`Content-Length: ${5 + SMUGGLED.length}\r\nTransfer-Encoding:\tchunked\r\n`, `0\r\n\r\n${SMUGGLED}`), expect: 'refused' },
  { name: 'TE xchunked', bytes: post('Transfer-Encoding: xchunked\r\n', `0\r\n\r\n${SMUGGLED}`), expect: 'refused', status: 501 },
  { name: 'TE chunked, identity', bytes: post('Transfer-Encoding: chunked, identity\r\n', `0\r\n\r\n${SMUGGLED}`), expect: 'refused', status: 501 },
  { name: 'TE identity, then chunked on its own line', bytes: post('Transfer-Encoding: identity\r\nTransfer-Encoding: chunked\r\nContent-Length: 4\r\n', chunked(SMUGGLED)), expect: 'refused' },
  { name: 'TE obs-fold', bytes: post(`Content-Length: ${5 + SMUGGLED.length}\r\nTransfer-Encoding:\r\n chunked\r\n`, `0\r\n\r\n${SMUGGLED}`), expect: 'refused' },
  { name: 'TE CHUNKED upper case with CL', bytes: post(`Content-Length: ${5 + SMUGGLED.length}\r\nTransfer-Encoding: CHUNKED\r\n`, `0\r\n\r\n${SMUGGLED}`), expect: 'refused' },
  { name: 'TE with a NUL', bytes: post('Transfer-Encoding: chunked\0\r\n', `0\r\n\r\n${SMUGGLED}`), expect: 'refused' },
  { name: 'two different Content-Lengths', bytes: post(`Content-Length: 0\r\nContent-Length: ${SMUGGLED.length}\r\n`, SMUGGLED), expect: 'refused' },
  { name: 'Content-Length list', bytes: post(`Content-Length: 0, ${SMUGGLED.length}\r\n`, SMUGGLED), expect: 'refused' },
  { name: 'Content-Length with a plus sign', bytes: post(`Content-Length: +${SMUGGLED.length}\r\n`, SMUGGLED), expect: 'refused' },
  { name: 'Content-Length in hex', bytes: post(`Content-Length: 0x${SMUGGLED.length.toString(16)}\r\n`, SMUGGLED), expect: 'refused' },
  { name: 'Content-Length with a space before the colon', bytes: post(`Content-Length : ${SMUGGLED.length}\r\n`, SMUGGLED), expect: 'refused' },
  { name: 'chunk size with 0x', bytes: post('Transfer-Encoding: chunked\r\n', `0x${SMUGGLED.length.toString(16)}\r\n${SMUGGLED}\r\n0\r\n\r\n`), expect: 'refused' },
  { name: 'chunk size overflowing 64 bits', bytes: post('Transfer-Encoding: chunked\r\n', `10000000000000001\r\nA\r\n0\r\n\r\n${SMUGGLED}`), expect: 'refused' },
  { name: 'chunk size followed by a bare LF', bytes: post('Transfer-Encoding: chunked\r\n', `${SMUGGLED.length.toString(16)}\n${SMUGGLED}\r\n0\r\n\r\n`), expect: 'refused' },
  { name: 'chunk data longer than its size', bytes: post('Transfer-Encoding: chunked\r\n', `1\r\nAB\r\n0\r\n\r\n${SMUGGLED}`), expect: 'refused' },
  { name: 'a bare CR in a header value', bytes: post(`X-A: a\rTransfer-Encoding: chunked\r\nContent-Length: ${SMUGGLED.length}\r\n`, SMUGGLED), expect: 'refused' },
  { name: 'a header name with a space', bytes: post(`Content-Length: ${SMUGGLED.length}\r\nBad Header: x\r\n`, SMUGGLED), expect: 'refused' },
  { name: 'a request line with a bare LF inside', bytes: `GET /vector\nGET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n`, expect: 'refused' },
  { name: 'HTTP/1.0 with Transfer-Encoding and Content-Length', bytes: `POST /vector HTTP/1.0\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 4\r\n\r\n${chunked(SMUGGLED)}`, expect: 'refused' },
  { name: 'duplicate Host', bytes: `GET /vector HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n`, expect: 'refused' },
  // Well framed: what looks like a request is body, and must stay body.
  { name: 'a request inside a Content-Length body', bytes: post(`Content-Length: ${SMUGGLED.length}\r\n`, SMUGGLED), expect: 'served' },
  { name: 'a request inside a chunked body', bytes: post('Transfer-Encoding: chunked\r\n', chunked(SMUGGLED)), expect: 'served' },
  { name: 'a request inside a chunk with an extension', bytes: post('Transfer-Encoding: chunked\r\n', `${SMUGGLED.length.toString(16)};ext=1\r\n${SMUGGLED}\r\n0\r\n\r\n`), expect: 'served' },
  { name: 'a request inside a body, with trailers', bytes: post('Transfer-Encoding: chunked\r\n', `${SMUGGLED.length.toString(16)}\r\n${SMUGGLED}\r\n0\r\nX-Trailer: 1\r\n\r\n`), expect: 'served' },
  { name: 'GET with a body holding a request', bytes: `GET /vector HTTP/1.1\r\nHost: x\r\nContent-Length: ${SMUGGLED.length}\r\n\r\n${SMUGGLED}`, expect: 'served' },
  { name: 'a request inside a header value', bytes: `GET /vector HTTP/1.1\r\nHost: x\r\nX-A: ${SMUGGLED.replace(/\r\n/g, ' ')}\r\n\r\n`, expect: 'served' },
];

/**
 * Sends a vector and then the sentinel (`Connection: close`) on one connection; resolves with all
 * the proxy answered once it closes — by then it has dealt with everything before the sentinel.
 */
export function sendVector(port: number, bytes: string): Promise<string> {
  return withDeadline(
    'the proxy to close the connection',
    new Promise((resolve) => {
      let out = '';
      // Not end(): a client's half-close ends its HTTP/1 connection, as in Envoy.
      const s = connect(port, '127.0.0.1', () => s.write(Buffer.from(bytes + SENTINEL, 'latin1')));
      s.on('data', (d) => (out += d.toString('latin1')));
      s.on('error', () => undefined);
      s.on('close', () => resolve(out));
    }),
  );
}

/** The status codes of the responses in what the proxy answered, in order. */
export function statuses(answer: string): number[] {
  return [...answer.matchAll(/^HTTP\/1\.[01] (\d{3})/gm)].map((m) => Number(m[1]));
}
