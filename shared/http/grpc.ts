/**
 * What the proxy knows of gRPC on its HTTP path, as Envoy's gRPC utilities decide it: which
 * requests are gRPC (their local replies are gRPC replies), the status an HTTP failure maps to,
 * and a grpc-message's encoding.
 */

/** Envoy's rule: exactly `application/grpc`, or `application/grpc+<subtype>` (gRPC-Web is not gRPC). */
export function isGrpcContentType(value: string | string[] | undefined): boolean {
  if (typeof value !== 'string' || !value.startsWith('application/grpc')) return false;
  return value.length === 16 || value.charCodeAt(16) === 43 /* '+' */;
}

/** The gRPC status of an HTTP status (gRPC's http-grpc-status-mapping, as Envoy applies it). */
export function httpToGrpcStatus(status: number): number {
  switch (status) {
    case 400:
      return 13; // INTERNAL
    case 401:
      return 16; // UNAUTHENTICATED
    case 403:
      return 7; // PERMISSION_DENIED
    case 404:
      return 12; // UNIMPLEMENTED
    case 429:
    case 502:
    case 503:
    case 504:
      return 14; // UNAVAILABLE
    default:
      return 2; // UNKNOWN
  }
}

/** A grpc-message value: UTF-8, with `%` and every byte outside printable ASCII percent-encoded (gRPC's rule). */
export function encodeGrpcMessage(text: string): string {
  let plain = true;
  for (let i = 0; i < text.length && plain; i++) {
    const c = text.charCodeAt(i);
    plain = c >= 0x20 && c <= 0x7e && c !== 0x25;
  }
  if (plain) return text;
  let out = '';
  for (const byte of Buffer.from(text, 'utf8')) out += byte >= 0x20 && byte <= 0x7e && byte !== 0x25 ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  return out;
}

/** `/package.Service/Method` (a query ignored) as its service and method; undefined for any other path. */
export function grpcServiceAndMethod(path: string): { service: string; method: string } | undefined {
  const q = path.indexOf('?');
  const parts = (q < 0 ? path : path.slice(0, q)).split('/').filter((p) => p !== '');
  return parts.length === 2 ? { service: parts[0]!, method: parts[1]! } : undefined;
}
