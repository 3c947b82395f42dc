import { ipBytes, ipv4Text, ipv6Text, isUnicast } from './ip-bytes.js';

/**
 * HAProxy's PROXY protocol (proxy-protocol.txt), versions 1 and 2, as Envoy reads it in its
 * listener filter and writes it in its upstream transport socket: the header a proxy in front
 * sends before a connection's own bytes, naming the client (source) and the address it connected
 * to (destination), and in version 2 type-length-value extensions (TLVs).
 */

export interface Endpoint {
  ip: string;
  port: number;
}

export interface Tlv {
  type: number;
  value: Buffer;
}

export type ProxyVersion = 'v1' | 'v2';

/** "\r\n\r\n\0\r\nQUIT\n" */
export const V2_SIGNATURE = Buffer.from([0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a]);
const V1_SIGNATURE = Buffer.from('PROXY ', 'latin1');
const V2_HEADER_LENGTH = 16;
/** The longest version 1 line, CRLF included (the specification's 107, and Envoy's one more). */
const V1_MAX_LENGTH = 108;
const V2_ADDRESS_LENGTH = { inet: 12, inet6: 36 } as const;
/** Envoy's cap on what it writes: the 16-bit length field. */
export const V2_MAX_LENGTH = V2_HEADER_LENGTH + 0xffff;

export interface ReadOptions {
  allowV1: boolean;
  allowV2: boolean;
  /** allow_requests_without_proxy_protocol: bytes that cannot begin a header go on as they are. */
  allowAbsent: boolean;
}

export type ReadResult =
  /** Not enough bytes yet. */
  | { state: 'more' }
  /** No header, and that is allowed. */
  | { state: 'absent' }
  /** Malformed (version undefined: the bytes are no header of either version). */
  | { state: 'error'; version: ProxyVersion | undefined }
  /** A header of a version disallowed_versions names. */
  | { state: 'denied'; version: ProxyVersion }
  | {
      state: 'done';
      version: ProxyVersion;
      /** Its bytes, TLVs included: they are the header's, not the connection's. */
      length: number;
      /** Version 2's LOCAL command, version 1's UNKNOWN: the connection's own addresses stand. */
      local: boolean;
      source?: Endpoint;
      destination?: Endpoint;
      tlvs: Tlv[];
    };

function startsLike(data: Buffer, signature: Buffer): boolean {
  const n = Math.min(data.length, signature.length);
  return data.subarray(0, n).equals(signature.subarray(0, n));
}

/** The header at the start of `data`, as Envoy's proxy_protocol listener filter reads it. */
export function readProxyHeader(data: Buffer, o: ReadOptions): ReadResult {
  if (o.allowAbsent && !(o.allowV2 && startsLike(data, V2_SIGNATURE)) && !(o.allowV1 && startsLike(data, V1_SIGNATURE))) return { state: 'absent' };
  let v2 = false;
  if (data.length >= V2_HEADER_LENGTH) {
    if (data.subarray(0, V2_SIGNATURE.length).equals(V2_SIGNATURE)) v2 = true;
    else if (!data.subarray(0, V1_SIGNATURE.length).equals(V1_SIGNATURE)) return { state: 'error', version: undefined };
  }
  if (v2) return o.allowV2 ? readV2(data) : { state: 'denied', version: 'v2' };
  // Version 1: a line. CRLF at the very start may yet be version 2's signature.
  for (let i = 1; i < data.length; i++) {
    if (data[i] !== 0x0a || data[i - 1] !== 0x0d) continue;
    if (i === 1) return { state: 'more' };
    if (i + 1 > V1_MAX_LENGTH) return { state: 'error', version: undefined };
    if (!o.allowV1) return { state: 'denied', version: 'v1' };
    return readV1(data.toString('latin1', 0, i + 1));
  }
  return data.length > V1_MAX_LENGTH ? { state: 'error', version: undefined } : { state: 'more' };
}

function endpointOf(ip: string, port: string, family: 4 | 6): Endpoint | undefined {
  const bytes = ipBytes(ip);
  if (!bytes || bytes.length !== (family === 4 ? 4 : 16) || ip.includes('%')) return undefined;
  if (!/^\d{1,5}$/.test(port) || Number(port) > 65535) return undefined;
  return { ip: family === 4 ? ipv4Text(bytes) : ipv6Text(bytes), port: Number(port) };
}

function readV1(line: string): ReadResult {
  const parts = line.trimEnd().split(' ');
  const error = { state: 'error', version: 'v1' } as const;
  if (parts.length < 2 || parts[0] !== 'PROXY') return error;
  if (parts[1] === 'UNKNOWN') return { state: 'done', version: 'v1', length: line.length, local: true, tlvs: [] };
  if (parts.length !== 6 || (parts[1] !== 'TCP4' && parts[1] !== 'TCP6')) return error;
  const family = parts[1] === 'TCP4' ? 4 : 6;
  const source = endpointOf(parts[2]!, parts[4]!, family);
  const destination = endpointOf(parts[3]!, parts[5]!, family);
  if (!source || !destination || !isUnicast(ipBytes(source.ip)!) || !isUnicast(ipBytes(destination.ip)!)) return error;
  return { state: 'done', version: 'v1', length: line.length, local: false, source, destination, tlvs: [] };
}

function readV2(data: Buffer): ReadResult {
  const error = { state: 'error', version: 'v2' } as const;
  const verCmd = data[12]!;
  const family = data[13]!;
  if (verCmd >> 4 !== 2) return error;
  const command = verCmd & 0x0f;
  const declared = data.readUInt16BE(14);
  const length = V2_HEADER_LENGTH + declared;
  if (command === 0) {
    // LOCAL (a health check of the proxy in front): no addresses; whatever follows is skipped.
    return data.length < length ? { state: 'more' } : { state: 'done', version: 'v2', length, local: true, tlvs: [] };
  }
  const addressFamily = family >> 4;
  const addressLength = addressFamily === 1 ? V2_ADDRESS_LENGTH.inet : addressFamily === 2 ? V2_ADDRESS_LENGTH.inet6 : undefined;
  // AF_UNSPEC, AF_UNIX: not addresses a TCP connection can have.
  if (addressLength === undefined || declared < addressLength) return error;
  if (data.length < V2_HEADER_LENGTH + addressLength) return { state: 'more' };
  // PROXY over STREAM or DGRAM; anything else is refused as soon as it shows.
  const transport = family & 0x0f;
  if (command !== 1 || (transport !== 1 && transport !== 2)) return error;
  if (data.length < length) return { state: 'more' };
  const at = V2_HEADER_LENGTH;
  const bytes = addressFamily === 1 ? 4 : 16;
  const text = addressFamily === 1 ? ipv4Text : ipv6Text;
  const src = data.subarray(at, at + bytes);
  const dst = data.subarray(at + bytes, at + 2 * bytes);
  if (!isUnicast(src) || !isUnicast(dst)) return error;
  const source = { ip: text(src), port: data.readUInt16BE(at + 2 * bytes) };
  const destination = { ip: text(dst), port: data.readUInt16BE(at + 2 * bytes + 2) };
  const tlvs = readTlvs(data.subarray(at + addressLength, length));
  if (!tlvs) return error;
  return { state: 'done', version: 'v2', length, local: false, source, destination, tlvs };
}

/** The extensions' TLVs (type, 16-bit length, value), or undefined when one runs past the header. */
function readTlvs(b: Buffer): Tlv[] | undefined {
  const tlvs: Tlv[] = [];
  for (let i = 0; i < b.length; ) {
    if (i + 3 > b.length) return undefined;
    const type = b[i]!;
    const n = b.readUInt16BE(i + 1);
    if (i + 3 + n > b.length) return undefined;
    tlvs.push({ type, value: Buffer.from(b.subarray(i + 3, i + 3 + n)) });
    i += 3 + n;
  }
  return tlvs;
}

/** A version 1 line: `PROXY TCP4 <src> <dst> <sport> <dport>\r\n` (TCP6 when the source is IPv6). */
export function proxyV1Header(source: Endpoint, destination: Endpoint): Buffer {
  const six = ipBytes(source.ip)?.length === 16;
  return Buffer.from(`PROXY ${six ? 'TCP6' : 'TCP4'} ${source.ip} ${destination.ip} ${source.port} ${destination.port}\r\n`, 'latin1');
}

/** Version 2's LOCAL command: no addresses (a connection of the proxy's own, a health check's). */
export function proxyV2LocalHeader(): Buffer {
  return Buffer.concat([V2_SIGNATURE, Buffer.from([0x20, 0x00, 0x00, 0x00])]);
}

/**
 * A version 2 PROXY header over TCP with the TLVs in order; undefined when they would not fit
 * its 16-bit length.
 */
export function proxyV2Header(source: Endpoint, destination: Endpoint, tlvs: readonly Tlv[]): Buffer | undefined {
  let src = ipBytes(source.ip)!;
  let dst = ipBytes(destination.ip)!;
  // One family for both: an IPv4 address beside an IPv6 one goes as IPv4-mapped.
  if (src.length !== dst.length) {
    const mapped = (b: Uint8Array) => (b.length === 16 ? b : Uint8Array.from([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, ...b]));
    src = mapped(src);
    dst = mapped(dst);
  }
  const addresses = src.length === 4 ? V2_ADDRESS_LENGTH.inet : V2_ADDRESS_LENGTH.inet6;
  const extensions = tlvs.reduce((n, t) => n + 3 + t.value.length, 0);
  if (addresses + extensions > 0xffff) return undefined;
  const out = Buffer.alloc(V2_HEADER_LENGTH + addresses + extensions);
  V2_SIGNATURE.copy(out, 0);
  out[12] = 0x21;
  out[13] = src.length === 4 ? 0x11 : 0x21;
  out.writeUInt16BE(addresses + extensions, 14);
  let at = V2_HEADER_LENGTH;
  out.set(src, at);
  out.set(dst, at + src.length);
  at += 2 * src.length;
  out.writeUInt16BE(source.port, at);
  out.writeUInt16BE(destination.port, at + 2);
  at += 4;
  for (const t of tlvs) {
    out[at] = t.type;
    out.writeUInt16BE(t.value.length, at + 1);
    t.value.copy(out, at + 3);
    at += 3 + t.value.length;
  }
  return out;
}
