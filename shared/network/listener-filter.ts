/**
 * What a listener filter is to a listener (Envoy's ListenerFilter reading the first bytes):
 * it reads a new connection's first bytes until it knows what it looks for, then steps aside and
 * the bytes are put back for the filter chain; what it found is what filter chain matching uses
 * (Envoy's ConnectionSocket setters). The worker's listener runs it (worker/listeners.ts); each
 * one is a folder under shared/extensions/filters/listener/.
 */

export interface ConnectionFindings {
  serverName: string | undefined;
  transportProtocol: 'tls' | 'raw_buffer';
  applicationProtocols: string[];
}

export interface ListenerFilter {
  /** The connection's bytes so far: undefined while it needs more, else what it found. */
  onData(data: Buffer): ConnectionFindings | undefined;
}
