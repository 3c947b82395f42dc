import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/**
 * Which of `pids` holds the TCP socket bound to 127.0.0.1:`port` (the other end of a connection a
 * test server accepted), read from /proc: the socket's inode from /proc/net/tcp, then the process
 * whose descriptors include it. Undefined when the socket is gone or none of them holds it.
 */
export function tcpSocketOwner(port: number, pids: number[]): number | undefined {
  const local = `0100007F:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  const row = readFileSync('/proc/net/tcp', 'utf8').split('\n').map((l) => l.trim().split(/\s+/)).find((f) => f[1] === local);
  const inode = row?.[9];
  if (!inode || inode === '0') return undefined;
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        if (readlinkSync(`/proc/${pid}/fd/${fd}`) === `socket:[${inode}]`) return pid;
      } catch {
        // closed meanwhile
      }
    }
  }
  return undefined;
}
