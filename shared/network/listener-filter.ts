import type { ConnectionOrigin } from './connection-origin.js';

/**
 * What a listener filter is to a listener (Envoy's ListenerFilter reading the first bytes):
 * it reads a new connection's first bytes until it knows what it looks for, then steps aside and
 * the bytes are put back for the next filter and then the filter chain, less those it consumed (a
 * PROXY header); what it found is what filter chain matching uses (Envoy's ConnectionSocket
 * setters). The worker's listener runs them in order (worker/listeners.ts); each one is a folder
 * under shared/extensions/filters/listener/.
 */

export interface ConnectionFindings {
  serverName: string | undefined;
  transportProtocol: 'tls' | 'raw_buffer';
  applicationProtocols: string[];
}

export interface ListenerFilterVerdict {
  /** The connection is closed (a malformed or refused header). */
  close?: boolean;
  /** How many of the first bytes were the filter's own: they go no further. */
  consumed?: number;
  /** What it found for filter chain matching. */
  findings?: ConnectionFindings;
  /** The connection's addresses (and TLVs) as a proxy in front named them. */
  origin?: ConnectionOrigin;
}

/** The socket's addresses as a filter may read them. */
export interface InspectedSocket {
  remoteAddress?: string;
  remotePort?: number;
  localAddress?: string;
  localPort?: number;
}

export interface ListenerFilter {
  /** The connection's bytes so far (after what earlier filters consumed): undefined while it needs more. */
  onData(data: Buffer, socket: InspectedSocket): ListenerFilterVerdict | undefined;
}
