import { connect as h2connect, constants as h2 } from 'node:http2';
import { connect } from 'node:net';

/**
 * HTTP/2 abuse as issue 13 probed it, shared by test/http-hardening.test.ts and
 * scripts/probe-hostile.ts: raw frames, connections that send garbage and never close, and a
 * rapid-reset storm (CVE-2023-44487).
 */

export const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');

export function frame(type: number, flags: number, stream: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  const h = Buffer.alloc(9);
  h.writeUIntBE(payload.length, 0, 3);
  h[3] = type;
  h[4] = flags;
  h.writeUInt32BE(stream, 5);
  return Buffer.concat([h, payload]);
}

export const SETTINGS = frame(4, 0, 0);

/** Protocol errors nghttp2 answers with GOAWAY. */
export const GARBAGE: readonly Buffer[] = [
  Buffer.concat([PREFACE, SETTINGS, frame(0, 0, 0, Buffer.from('x'))]), // DATA on stream 0
  Buffer.concat([PREFACE, SETTINGS, Buffer.from('garbage garbage garbage garbage')]), // a 6 MB frame header
  Buffer.concat([PREFACE, Buffer.alloc(100, 0xff)]), // no SETTINGS
  Buffer.concat([PREFACE, SETTINGS, frame(1, 4, 2, Buffer.from([0x82]))]), // HEADERS on a server stream id
];

/**
 * Opens `count` connections that each send `bytes(i)`, read whatever comes and never close
 * themselves; resolves once the server has closed every one, with the ms each took.
 */
export function connectionsClosedByServer(port: number, bytes: (i: number) => Buffer, count: number): Promise<number[]> {
  const started = Date.now();
  return Promise.all(
    Array.from({ length: count }, (_, i) =>
      new Promise<number>((resolve) => {
        const s = connect(port, '127.0.0.1', () => s.write(bytes(i)));
        s.on('data', () => undefined);
        s.on('error', () => undefined);
        s.on('close', () => resolve(Date.now() - started));
      }),
    ),
  );
}

/**
 * One connection opening streams and resetting each at once, 50 per turn of the event loop,
 * until the server closes the connection or `maxStreams` were opened. `closedByServer` says which.
 */
export async function rapidResetStorm(port: number, path: string, maxStreams: number): Promise<{ opened: number; closedByServer: boolean }> {
  const client = h2connect(`http://127.0.0.1:${port}`);
  client.on('error', () => undefined);
  let closed = false;
  client.on('close', () => (closed = true));
  await new Promise<void>((resolve) => client.on('connect', () => resolve()));
  let opened = 0;
  while (!closed && opened < maxStreams) {
    for (let i = 0; i < 50 && !closed; i++) {
      try {
        const s = client.request({ ':path': path });
        s.on('error', () => undefined);
        s.close(h2.NGHTTP2_CANCEL);
        opened++;
      } catch {
        closed = true; // the session is closing
      }
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
  const closedByServer = closed;
  client.destroy();
  return { opened, closedByServer };
}
