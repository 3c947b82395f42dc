import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/**
 * Which of `pids` holds the client end of an open TCP connection from 127.0.0.1:`localPort` to
 * 127.0.0.1:`remotePort` (a connection a test server accepted), read from /proc: the socket's
 * inode from /proc/net/tcp (the whole four-tuple, established: a port may also appear in other
 * connections, or in TIME_WAIT with no inode), then the process whose descriptors include it.
 * Undefined when the connection is gone or none of them holds it.
 */
export function tcpSocketOwner(localPort: number, remotePort: number, pids: number[]): number | undefined {
  const address = (port: number) => `0100007F:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  const [local, remote] = [address(localPort), address(remotePort)];
  const row = readFileSync('/proc/net/tcp', 'utf8').split('\n').map((l) => l.trim().split(/\s+/)).find((f) => f[1] === local && f[2] === remote && f[3] === '01');
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
