import type { IncomingHttpHeaders } from 'node:http';
import { list } from '../../shared/config/access.js';
import type { JsonObject } from '../../shared/config/proto-json.js';
import type { HttpFilterFactory } from '../../shared/http/filter-api.js';

/**
 * Which upgrades a connection manager allows (its `upgrade_configs`), and with which HTTP
 * filters, as Envoy decides: a route's own `upgrade_configs` entry for the type
 * (case-insensitive) says yes or no when it has one; otherwise the connection manager's entry
 * does (`enabled`, default true), and a type neither names is refused. An upgrade whose
 * connection manager entry has `filters` runs those instead of `http_filters`.
 */

interface UpgradeEntry {
  enabled: boolean;
  /** The upgrade's own filter chain (without the router), when it has one. */
  filters: HttpFilterFactory[] | undefined;
}

export class UpgradePolicy {
  private readonly types = new Map<string, UpgradeEntry>();

  constructor(configs: unknown, buildFilters: (filters: JsonObject[]) => HttpFilterFactory[]) {
    for (const c of list(configs)) {
      const filters = list(c.filters);
      this.types.set(String(c.upgrade_type).toLowerCase(), {
        enabled: c.enabled !== false,
        filters: filters.length ? buildFilters(filters) : undefined,
      });
    }
  }

  get empty(): boolean {
    return this.types.size === 0;
  }

  /**
   * The filters an upgrade of `type` runs (undefined: the connection manager's own), or null
   * when it is refused (Envoy's 403 and downstream_rq_ws_on_non_ws_route).
   */
  decide(type: string, routeUpgrades: ReadonlyMap<string, boolean> | undefined): HttpFilterFactory[] | undefined | null {
    const key = type.toLowerCase();
    const route = routeUpgrades?.get(key);
    if (route === false) return null;
    const entry = this.types.get(key);
    if ((!entry || !entry.enabled) && route !== true) return null;
    return entry?.filters;
  }
}

/**
 * The protocol an HTTP/1.1 request asks to upgrade to, as Envoy's codec sees one: an Upgrade
 * header named in Connection. `h2c` is not one: Envoy's codec drops that offer and serves the
 * request as HTTP/1.1.
 */
export function upgradeTypeOf(headers: IncomingHttpHeaders): string | undefined {
  const upgrade = headers.upgrade;
  const connection = headers.connection;
  if (!upgrade || !connection) return undefined;
  const type = upgrade.trim();
  if (type.toLowerCase() === 'h2c') return undefined;
  return connection.toLowerCase().split(',').some((t) => t.trim() === 'upgrade') ? type : undefined;
}

/**
 * An h2c offer's request head as it would have come without the offer (no Upgrade and
 * HTTP2-Settings, and no such tokens in Connection), so Node's HTTP/1.1 parser reads it, and
 * whatever follows, as a plain request. Node hands such a request to the 'upgrade' event; this
 * is how it gets back on the ordinary path.
 */
export function withoutH2cOffer(method: string, url: string, rawHeaders: string[]): Buffer {
  let head = `${method} ${url} HTTP/1.1\r\n`;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    const lower = name.toLowerCase();
    if (lower === 'upgrade' || lower === 'http2-settings') continue;
    let value = rawHeaders[i + 1]!;
    if (lower === 'connection') {
      value = value
        .split(',')
        .map((t) => t.trim())
        .filter((t) => t && !['upgrade', 'http2-settings'].includes(t.toLowerCase()))
        .join(', ');
      if (!value) continue;
    }
    head += `${name}: ${value}\r\n`;
  }
  return Buffer.from(`${head}\r\n`, 'latin1');
}
