import type { JsonObject } from '../shared/config/proto-json.js';
import { typeNameOfUrl } from '../shared/config/wkt.js';
import { extensionByName, extensionByTypeName } from '../shared/config/extensions.js';
import type { ListenerInfo } from '../shared/ipc.js';
import { listenerStatPrefix } from '../shared/stats/scopes.js';
import { HttpConnectionManager, type ConnectionManagerContext } from './http/connection-manager.js';
import { TcpProxy } from './tcp/tcp-proxy.js';

/**
 * The listeners one worker serves: for each inherited listening socket, the terminal network
 * filter of its filter chain (an HTTP connection manager or a TCP proxy), listening on the
 * descriptor the supervisor handed down.
 */

type Obj = JsonObject;

export interface ServedListener {
  info: ListenerInfo;
  filter: HttpConnectionManager | TcpProxy;
}

function terminalFilter(listener: Obj): { name: string; config: Obj } {
  const chains = (listener.filter_chains as Obj[] | undefined) ?? [];
  const chain = chains[0] ?? (listener.default_filter_chain as Obj);
  const filters = (chain.filters as Obj[] | undefined) ?? [];
  const f = filters[filters.length - 1]!;
  const config = (f.typed_config ?? {}) as Obj;
  const ext = typeof config['@type'] === 'string' ? extensionByTypeName(typeNameOfUrl(config['@type'])) : extensionByName(String(f.name));
  return { name: ext?.name ?? String(f.name), config };
}

export async function serveListeners(bootstrap: Obj, infos: ListenerInfo[], ctx: Omit<ConnectionManagerContext, 'listenerStatPrefix' | 'trafficDirection'>): Promise<ServedListener[]> {
  const configs = ((bootstrap.static_resources as Obj | undefined)?.listeners ?? []) as Obj[];
  const served: ServedListener[] = [];
  for (const info of infos) {
    const listener = configs[info.configIndex]!;
    const { name, config } = terminalFilter(listener);
    const prefix = listenerStatPrefix(info.address, listener.stat_prefix as string | undefined);
    const filter = name === 'envoy.filters.network.tcp_proxy' ? new TcpProxy(config, ctx.clusters, prefix) : new HttpConnectionManager(config, { ...ctx, listenerStatPrefix: prefix, trafficDirection: info.trafficDirection });
    await filter.listen(info.childFd);
    served.push({ info, filter });
  }
  return served;
}
