import { isIP } from 'node:net';
import type { Resolver } from 'node:dns/promises';
import { dnsPromisesModule } from '../../shared/builtins.js';
import type { Cluster as ClusterConfig } from '../../shared/config/envoy-types.js';
import { caresSettings } from '../../shared/extensions/network/dns-resolver/cares/cares.js';

/** A name's addresses, and the shortest TTL of the records that gave them (0: none known). */
export interface DnsAnswer {
  addresses: string[];
  ttlS: number;
}

type Family = 'V4_ONLY' | 'V6_ONLY' | 'V4_PREFERRED' | 'ALL' | 'AUTO';

/**
 * How a STRICT_DNS or LOGICAL_DNS cluster resolves its endpoints' names:
 * - with typed_dns_resolver_config's c-ares `resolvers`, those name servers, asked for A and AAAA
 *   records in the order dns_lookup_family gives (AUTO: AAAA, else A; V4_PREFERRED: A, else
 *   AAAA; ALL: both), with the records' TTL;
 * - else the system's resolver (getaddrinfo: /etc/hosts, then DNS), as before; with
 *   respect_dns_ttl the TTL is asked of the system's name servers beside it (a name only in
 *   /etc/hosts has none, and keeps dns_refresh_rate).
 * Envoy's respect_dns_ttl: the next resolution comes after the shortest TTL, if there is one.
 */
export class ClusterDns {
  private readonly resolver: Resolver | undefined;
  private readonly ttlResolver: Resolver | undefined;
  private readonly family: Family;

  constructor(config: ClusterConfig) {
    this.family = (config.dns_lookup_family as Family | undefined) ?? 'AUTO';
    const cares = caresSettings(config);
    if (cares === undefined && config.respect_dns_ttl !== true) return; // node:dns loads when a name is first resolved
    const dns = dnsPromisesModule();
    const useCares = cares !== undefined && cares.servers.length > 0 && !(cares.fallback && dns.getServers().length > 0);
    if (useCares) {
      this.resolver = new dns.Resolver({ timeout: cares.timeoutMs, tries: cares.tries });
      this.resolver.setServers(cares.servers);
    } else if (config.respect_dns_ttl === true) {
      this.ttlResolver = new dns.Resolver({ timeout: 5000, tries: 4 });
    }
  }

  async resolve(hostname: string): Promise<DnsAnswer> {
    if (isIP(hostname)) return { addresses: [hostname], ttlS: 0 };
    if (this.resolver) return this.records(this.resolver, hostname, true);
    const dns = dnsPromisesModule();
    const family = this.family === 'V4_ONLY' ? 4 : this.family === 'V6_ONLY' ? 6 : 0;
    const found = await dns.lookup(hostname, { all: true, family, order: family === 0 && this.family === 'V4_PREFERRED' ? 'ipv4first' : 'verbatim' });
    const ttlS = this.ttlResolver ? (await this.records(this.ttlResolver, hostname, false).catch(() => ({ ttlS: 0 }))).ttlS : 0;
    return { addresses: found.map((a) => a.address), ttlS };
  }

  /** A and AAAA records as the family asks; `strict`: no address is an error (ENOTFOUND), as a lookup's. */
  private async records(resolver: Resolver, hostname: string, strict: boolean): Promise<DnsAnswer> {
    const ask = async (v: 4 | 6) => {
      try {
        return await (v === 4 ? resolver.resolve4(hostname, { ttl: true }) : resolver.resolve6(hostname, { ttl: true }));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENODATA' || (err as NodeJS.ErrnoException).code === 'ENOTFOUND') return [];
        throw err;
      }
    };
    let records: { address: string; ttl: number }[];
    switch (this.family) {
      case 'V4_ONLY':
        records = await ask(4);
        break;
      case 'V6_ONLY':
        records = await ask(6);
        break;
      case 'ALL':
        records = [...(await ask(4)), ...(await ask(6))];
        break;
      case 'V4_PREFERRED': {
        const v4 = await ask(4);
        records = v4.length ? v4 : await ask(6);
        break;
      }
      default: {
        const v6 = await ask(6);
        records = v6.length ? v6 : await ask(4);
      }
    }
    if (strict && records.length === 0) throw Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' });
    return { addresses: records.map((r) => r.address), ttlS: records.length ? Math.min(...records.map((r) => r.ttl)) : 0 };
  }
}
