import { stats } from '../../../../stats/process.js';
import type { Counter, Histogram } from '../../../../stats/store.js';
import type { ListenerFilter, ListenerFilterVerdict } from '../../../../network/listener-filter.js';
import { parseClientHello, type ClientHello } from './client-hello.js';

/**
 * envoy.filters.listener.tls_inspector: the ClientHello's server name and ALPN protocols, or
 * plaintext, for filter chain matching, counted in Envoy's `tls_inspector.*` (rooted there for
 * every listener, made with the first listener that inspects).
 */

interface InspectorStats {
  tooLarge: Counter;
  tlsFound: Counter;
  tlsNotFound: Counter;
  alpnFound: Counter;
  alpnNotFound: Counter;
  sniFound: Counter;
  sniNotFound: Counter;
  bytesProcessed: Histogram;
}

let inspectorStats: InspectorStats | undefined;

function statsOf(): InspectorStats {
  const c = (name: string) => stats.counter(`tls_inspector.${name}`);
  return (inspectorStats ??= {
    tooLarge: c('client_hello_too_large'),
    tlsFound: c('tls_found'),
    tlsNotFound: c('tls_not_found'),
    alpnFound: c('alpn_found'),
    alpnNotFound: c('alpn_not_found'),
    sniFound: c('sni_found'),
    sniNotFound: c('sni_not_found'),
    bytesProcessed: stats.histogram('tls_inspector.bytes_processed'),
  });
}

function count(s: InspectorStats, hello: ClientHello, bytes: number): void {
  s.bytesProcessed.record(bytes);
  if (hello.tooLarge) s.tooLarge.inc();
  if (!hello.tls) {
    s.tlsNotFound.inc();
    return;
  }
  s.tlsFound.inc();
  (hello.alpn.length > 0 ? s.alpnFound : s.alpnNotFound).inc();
  (hello.serverName !== undefined ? s.sniFound : s.sniNotFound).inc();
}

class TlsInspector implements ListenerFilter {
  constructor(private readonly s: InspectorStats) {}

  onData(data: Buffer): ListenerFilterVerdict | undefined {
    const parsed = parseClientHello(data);
    if (!parsed.done) return undefined;
    const hello = parsed.hello;
    count(this.s, hello, data.length);
    return { findings: { serverName: hello.serverName, transportProtocol: hello.tls ? 'tls' : 'raw_buffer', applicationProtocols: hello.alpn } };
  }
}

/** The inspector of a listener: its figures exist from the listener's start, as Envoy's do. */
export function tlsInspector(): () => ListenerFilter {
  const s = statsOf();
  return () => new TlsInspector(s);
}
