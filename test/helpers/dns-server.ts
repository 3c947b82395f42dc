import { createSocket, type Socket } from 'node:dgram';

/**
 * A DNS server for tests (RFC 1035 over UDP, on 127.0.0.1): A queries for the names it is given
 * are answered with their address and TTL; AAAA queries, and other names, with no answer
 * (NOERROR/NODATA, NXDOMAIN). It counts the queries each name got.
 */
export interface TestDns {
  port: number;
  /** The A record of `name` (lower case, no trailing dot). */
  set(name: string, address: string, ttlS: number): void;
  queries(name: string): number;
  close(): Promise<void>;
}

export async function startDns(): Promise<TestDns> {
  const records = new Map<string, { address: string; ttlS: number }>();
  const counts = new Map<string, number>();
  const socket: Socket = createSocket('udp4');
  socket.on('message', (query, peer) => {
    if (query.length < 12) return;
    let p = 12;
    const labels: string[] = [];
    while (p < query.length && query[p]! !== 0) {
      labels.push(query.subarray(p + 1, p + 1 + query[p]!).toString('latin1'));
      p += 1 + query[p]!;
    }
    const questionEnd = p + 5;
    if (questionEnd > query.length) return;
    const type = query.readUInt16BE(p + 1);
    const name = labels.join('.').toLowerCase();
    counts.set(name, (counts.get(name) ?? 0) + 1);
    const record = records.get(name);
    const answer = record && type === 1 ? Buffer.from([0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 0, 0, 4, ...record.address.split('.').map(Number)]) : Buffer.alloc(0);
    if (answer.length) answer.writeUInt32BE(record!.ttlS, 6);
    const header = Buffer.alloc(12);
    query.copy(header, 0, 0, 2); // the query's id
    header.writeUInt16BE(record ? 0x8180 : 0x8183, 2); // a response, recursion available; NXDOMAIN for an unknown name
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(answer.length ? 1 : 0, 6);
    socket.send(Buffer.concat([header, query.subarray(12, questionEnd), answer]), peer.port, peer.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return {
    port: socket.address().port,
    set: (name, address, ttlS) => records.set(name, { address, ttlS }),
    queries: (name) => counts.get(name) ?? 0,
    close: () => new Promise((resolve) => socket.close(() => resolve())),
  };
}
