import { stats } from './process.js';

/** What a socket holds unread (received, not yet taken) and unwritten (sent, not yet on the wire). */
interface Buffering {
  readonly readableLength: number;
  readonly writableLength: number;
}

/** Per pair of gauge names: the socket sets summed into them (several components can share a stat prefix). */
const groups = new Map<string, Set<Iterable<Buffering>>>();

/**
 * Envoy's `…_rx_bytes_buffered` / `…_tx_bytes_buffered` gauges of a set of connections (a
 * connection manager's, a TCP proxy's, a cluster's upstream ones): the bytes their sockets hold in
 * this process, summed when the statistics are collected (each flush, and each admin read).
 * Returns the unregistration, for a component that goes away.
 */
export function bufferedBytesGauges(rxName: string, txName: string, sockets: Iterable<Buffering>): () => void {
  const key = `${rxName}\n${txName}`;
  let group = groups.get(key);
  if (!group) {
    const members = new Set<Iterable<Buffering>>();
    group = members;
    groups.set(key, members);
    const rx = stats.gauge(rxName);
    const tx = stats.gauge(txName);
    stats.sampleBeforeDelta(() => {
      let r = 0;
      let t = 0;
      for (const set of members) {
        for (const s of set) {
          r += s.readableLength;
          t += s.writableLength;
        }
      }
      rx.set(r);
      tx.set(t);
    });
  }
  group.add(sockets);
  return () => group.delete(sockets);
}
