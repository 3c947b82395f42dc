/**
 * Envoy's TLS inspector: what the first bytes of a connection say, before any filter chain is
 * chosen. A TLS ClientHello (RFC 8446 §4.1.2) gives the server name (SNI, RFC 6066 §3) and the
 * ALPN protocols (RFC 7301); anything else is plaintext (`raw_buffer`). The handshake message may
 * span several TLS records; at most MAX_HELLO_BYTES are read, as Envoy's inspector caps it.
 */

export interface ClientHello {
  tls: boolean;
  serverName: string | undefined;
  alpn: string[];
  /** The ClientHello ran past MAX_HELLO_BYTES (tls_inspector.client_hello_too_large). */
  tooLarge?: true;
}

export const MAX_HELLO_BYTES = 64 * 1024;
const RECORD_HANDSHAKE = 22;
const HANDSHAKE_CLIENT_HELLO = 1;
const EXT_SERVER_NAME = 0;
const EXT_ALPN = 16;

/** The outcome so far: `more` when the bytes end before the ClientHello does. */
export type HelloParse = { done: true; hello: ClientHello } | { done: false };

const PLAINTEXT: HelloParse = { done: true, hello: { tls: false, serverName: undefined, alpn: [] } };
/** A TLS record that is not a ClientHello, or a malformed one: TLS without SNI or ALPN (the handshake itself will fail or succeed). */
const TLS_UNKNOWN: HelloParse = { done: true, hello: { tls: true, serverName: undefined, alpn: [] } };
const TOO_LARGE: HelloParse = { done: true, hello: { tls: true, serverName: undefined, alpn: [], tooLarge: true } };

export function parseClientHello(data: Buffer): HelloParse {
  if (data.length === 0) return { done: false };
  if (data[0] !== RECORD_HANDSHAKE) return PLAINTEXT;
  if (data.length >= 3 && data[1] !== 3) return PLAINTEXT; // record version major is always 3
  // Gather the handshake bytes from consecutive handshake records.
  const parts: Buffer[] = [];
  let have = 0;
  let offset = 0;
  let needed = -1;
  while (offset + 5 <= data.length) {
    if (data[offset] !== RECORD_HANDSHAKE) return TLS_UNKNOWN;
    const length = data.readUInt16BE(offset + 3);
    const end = offset + 5 + length;
    parts.push(data.subarray(offset + 5, Math.min(end, data.length)));
    have += Math.min(end, data.length) - (offset + 5);
    if (needed < 0 && have >= 4) {
      const head = Buffer.concat(parts);
      if (head[0] !== HANDSHAKE_CLIENT_HELLO) return TLS_UNKNOWN;
      needed = 4 + head.readUIntBE(1, 3);
      if (needed > MAX_HELLO_BYTES) return TOO_LARGE;
    }
    if (needed >= 0 && have >= needed) return { done: true, hello: readHello(Buffer.concat(parts).subarray(4, needed)) };
    if (end > data.length) break;
    offset = end;
  }
  return data.length >= MAX_HELLO_BYTES ? TOO_LARGE : { done: false };
}

function readHello(body: Buffer): ClientHello {
  const hello: ClientHello = { tls: true, serverName: undefined, alpn: [] };
  try {
    let p = 2 + 32; // client_version, random
    p += 1 + body[p]!; // session_id
    p += 2 + body.readUInt16BE(p); // cipher_suites
    p += 1 + body[p]!; // compression_methods
    if (p + 2 > body.length) return hello; // no extensions
    const end = Math.min(body.length, p + 2 + body.readUInt16BE(p));
    p += 2;
    while (p + 4 <= end) {
      const type = body.readUInt16BE(p);
      const length = body.readUInt16BE(p + 2);
      const ext = body.subarray(p + 4, p + 4 + length);
      p += 4 + length;
      if (type === EXT_SERVER_NAME) hello.serverName = serverName(ext);
      else if (type === EXT_ALPN) hello.alpn = protocols(ext);
    }
  } catch {
    // A truncated or malformed hello: what was read stands.
  }
  return hello;
}

function serverName(ext: Buffer): string | undefined {
  let p = 2; // server_name_list length
  while (p + 3 <= ext.length) {
    const type = ext[p]!;
    const length = ext.readUInt16BE(p + 1);
    if (type === 0) return ext.subarray(p + 3, p + 3 + length).toString('latin1').toLowerCase();
    p += 3 + length;
  }
  return undefined;
}

function protocols(ext: Buffer): string[] {
  const out: string[] = [];
  let p = 2; // protocol_name_list length
  while (p < ext.length) {
    const length = ext[p]!;
    out.push(ext.subarray(p + 1, p + 1 + length).toString('latin1'));
    p += 1 + length;
  }
  return out;
}
