import type { Http1Request } from '../http1/request.js';
import type { ScaledTimer } from '../../shared/overload/config.js';
import { onTimerScaleChange, scaledTimeoutMs, scalesTimer } from '../overload.js';
import type { DownstreamRequest, DownstreamResponse } from './downstream.js';
import type { UpgradeRequest } from './upgrade-router.js';

/**
 * A stream's idle timer, which any read or write restarts: the HTTP/1.1 connection's (it calls
 * `onIdle` itself), an upgraded HTTP/1.1 connection's socket timer, or Node's HTTP/2 stream
 * timeout, which tells the request while it is being read, then the response. Returns what sets
 * its length (stream_idle_timeout, then a route's idle_timeout). reduce_timeouts'
 * HTTP_DOWNSTREAM_STREAM_IDLE (`scaledBy`) shortens it; when that action's state changes, a stream's timer is
 * set again at its new length (its idle time counted from then).
 */
export function streamIdleTimer(req: DownstreamRequest, res: DownstreamResponse, upgrade: UpgradeRequest | undefined, onIdle: () => void, scaledBy: ScaledTimer | undefined): (ms: number) => void {
  let watched = false;
  let configuredMs = 0;
  const set = (ms: number) => {
    const first = !watched;
    watched = true;
    if (upgrade?.downstream.kind === 'h1') {
      // Node's server no longer relays this connection's timeout to the request: it is the connection's own now.
      upgrade.downstream.socket.setTimeout(ms);
      if (first) upgrade.downstream.socket.on('timeout', onIdle);
    } else if (req.httpVersionMajor === 1) {
      (req as unknown as Http1Request).setStreamIdleTimeout(ms, onIdle);
    } else {
      req.setTimeout(ms, first ? onIdle : undefined);
      if (first) res.on('timeout', onIdle);
    }
  };
  const scaled = scalesTimer(scaledBy);
  return (ms: number) => {
    if (scaled && configuredMs === 0) {
      const unlisten = onTimerScaleChange(() => set(scaledTimeoutMs(scaledBy, configuredMs)));
      res.once('close', unlisten);
    }
    configuredMs = ms;
    set(scaled ? scaledTimeoutMs(scaledBy, ms) : ms);
  };
}
