import type { HttpFilterFactory } from '../../shared/http/filter-api.js';
import type { Route } from '../../shared/http/route-table.js';
import type { HttpStats } from '../../shared/stats/http-stats.js';
import type { ConnectionDrain } from './connection-drain.js';
import type { DownstreamResponse } from './downstream.js';
import type { HttpExchangeRecord } from './exchange-record.js';
import { sendLocalReply, type LocalReplyContext } from './local-reply.js';
import type { UpgradeRequest } from './upgrade-router.js';
import type { UpgradePolicy } from './upgrades.js';

/**
 * An upgrade (WebSocket, extended CONNECT, CONNECT), routed, as Envoy's filter manager admits it:
 * a type upgrade_configs does not name, or that the route disables, is refused with 403 (and an
 * HTTP/1.1 connection closes: what follows could be upgraded bytes smuggling a request). An
 * admitted one is counted while it lasts and its tunnel joins the connection manager's drain.
 * Returns the HTTP filters it runs (its upgrade_configs entry's, else the manager's), or null when
 * refused.
 */
export function admitUpgrade(
  upgrade: UpgradeRequest,
  route: Route | undefined,
  policy: UpgradePolicy,
  filters: HttpFilterFactory[],
  x: { stats: HttpStats; res: DownstreamResponse; record: HttpExchangeRecord | undefined; reply: LocalReplyContext; drain: ConnectionDrain },
): HttpFilterFactory[] | null {
  const chain = policy.decide(upgrade.type, route?.action.kind === 'route' ? route.action.upgrades : undefined);
  if (chain === null) {
    x.stats.rqWsOnNonWsRoute.inc();
    if (x.record) x.record.responseCodeDetails = 'upgrade_failed';
    sendLocalReply(x.res, 403, '', x.reply);
    return null;
  }
  x.stats.cxUpgradesTotal.inc();
  x.stats.cxUpgradesActive.inc();
  x.res.once('close', () => {
    x.stats.cxUpgradesActive.dec();
    if (upgrade.tunnel) x.drain.left(upgrade.tunnel);
  });
  upgrade.joined = (tunnel) => x.drain.joined(tunnel);
  return chain ?? filters;
}
