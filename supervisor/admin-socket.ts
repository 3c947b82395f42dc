import { formatAddress } from '../shared/address.js';
import { obj } from '../shared/config/access.js';
import type { JsonObject } from '../shared/config/proto-json.js';
import { native } from '../shared/native/index.js';

/**
 * The admin interface's listening socket, bound by the supervisor before its workers start, as
 * Envoy binds its admin listener before its workers, and handed to the admin process (and to its
 * replacement after a crash: connections queue in the kernel meanwhile, where they were refused
 * while the admin process bound the address itself). An admin address that cannot be bound fails
 * the start at once, before any worker is given its configuration.
 */

/** Node's own backlog for a server, which the admin process used when it bound the address itself. */
const BACKLOG = 511;

export class AdminBindError extends Error {
  readonly code = 'PROXY_ADMIN_BIND';
}

export class AdminSocket {
  private closed = false;

  private constructor(
    readonly fd: number,
    /** As configured (port 0 stays 0): bound again from this if the socket is given up and taken back. */
    private readonly host: string,
    private readonly port: number,
  ) {}

  /** The bootstrap's admin address, bound and listening; undefined when there is no admin interface. */
  static bind(bootstrap: JsonObject): AdminSocket | undefined {
    const address = obj(bootstrap.admin).address;
    if (!address) return undefined;
    const sa = obj(obj(address).socket_address);
    const host = String(sa.address ?? '');
    const port = Number(sa.port_value ?? 0);
    return new AdminSocket(AdminSocket.listen(host, port), host, port);
  }

  private static listen(host: string, port: number): number {
    try {
      return native.listenTcp(host, port, BACKLOG)[0];
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      throw new AdminBindError(`cannot bind '${formatAddress(host, port)}' for the admin interface: ${e.code === 'EADDRINUSE' ? 'Address already in use' : e.message}`);
    }
  }

  /** The same address bound again, after close() (a hot-restart child that took it over exited). */
  rebind(): AdminSocket {
    return new AdminSocket(AdminSocket.listen(this.host, this.port), this.host, this.port);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    native.closeFd(this.fd);
  }
}
