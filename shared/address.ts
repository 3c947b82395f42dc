/** Addresses as the proxy prints them (`1.2.3.4:80`, `[::1]:80`, or a pipe path) and as Envoy's API shapes them. */

export function formatAddress(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/** envoy.config.core.v3.Address for a printed address: a socket_address, or a pipe for anything else. */
export function addressJson(address: string): { socket_address: { address: string; port_value: number } } | { pipe: { path: string } } {
  const m = /^\[?(.*?)\]?:(\d+)$/.exec(address);
  return m ? { socket_address: { address: m[1]!, port_value: Number(m[2]) } } : { pipe: { path: address } };
}

/** Whether `host` (an IP literal or a name) is only reachable from this machine. */
export function isLoopback(host: string): boolean {
  if (host === 'localhost' || host === '::1' || host === '0:0:0:0:0:0:0:1') return true;
  if (/^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host)) return true;
  return /^::ffff:127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/i.test(host);
}
