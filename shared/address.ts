/** Addresses as the proxy prints them (`1.2.3.4:80`, `[::1]:80`, or a pipe path) and as Envoy's API shapes them. */

export function formatAddress(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/** envoy.config.core.v3.Address for a printed address: a socket_address, or a pipe for anything else. */
export function addressJson(address: string): { socket_address: { address: string; port_value: number } } | { pipe: { path: string } } {
  const m = /^\[?(.*?)\]?:(\d+)$/.exec(address);
  return m ? { socket_address: { address: m[1]!, port_value: Number(m[2]) } } : { pipe: { path: address } };
}
