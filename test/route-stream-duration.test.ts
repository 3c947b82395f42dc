import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { grpcTimeoutHeader, grpcTimeoutMs } from '../worker/http/stream-duration.js';
import { routesListener, staticCluster } from './helpers/bootstraps.js';
import { httpRequest, startProxy, statValue, stopAllProxies, type RunningProxy } from './helpers/proxy.js';

/**
 * RouteAction.max_stream_duration, as Envoy's ActiveStream::refreshDurationTimeout: the route's
 * limit replaces the connection manager's max_stream_duration (0 lifts it); for a gRPC request,
 * grpc_timeout_header_max caps its grpc-timeout and grpc_timeout_header_offset takes from it, and
 * the upstream gets the result as its grpc-timeout. Reached: 408 `downstream duration timeout`
 * (gRPC: grpc-status 4), flag DT, downstream_rq_max_duration_reached.
 */

describe('grpc-timeout', () => {
  it("reads Envoy's units, rounding sub-millisecond ones up, and refuses what does not parse", () => {
    assert.deepEqual(['1H', '2M', '3S', '100m', '1500u', '1n', '0m'].map(grpcTimeoutMs), [3_600_000, 120_000, 3000, 100, 2, 1, 0]);
    for (const bad of [undefined, '', 'm', '10', '10x', '-5m', '123456789m', '1.5S']) assert.equal(grpcTimeoutMs(bad), undefined, String(bad));
  });

  it('writes milliseconds, or coarser units past 8 digits', () => {
    assert.deepEqual([250, 99_999_999, 100_000_000, 7_200_000_000_000].map(grpcTimeoutHeader), ['250m', '99999999m', '100000S', '2000000H']);
  });
});

describe('route max_stream_duration', () => {
  let upstream: Server;
  let proxy: RunningProxy;
  /** The grpc-timeout each request reached the upstream with. */
  const seen: (string | undefined)[] = [];

  before(async () => {
    upstream = createServer((req, res) => {
      seen.push(req.headers['grpc-timeout'] as string | undefined);
      req.resume();
      const wait = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('wait') ?? 0);
      setTimeout(() => res.end('ok'), wait);
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const port = (upstream.address() as { port: number }).port;
    const route = (prefix: string, maxStream?: object) => ({ match: { prefix }, route: { cluster: 'slow', timeout: '10s', ...(maxStream ? { max_stream_duration: maxStream } : {}) } });
    const listener = (name: string, hcmMax: string, routes: object[]) => routesListener(name, routes, 0, { hcm: { common_http_protocol_options: { max_stream_duration: hcmMax } } });
    proxy = await startProxy({
      admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
      static_resources: {
        listeners: [
          listener('long', '5s', [
            route('/short', { max_stream_duration: '0.2s' }),
            route('/grpc', { grpc_timeout_header_max: '0.3s', grpc_timeout_header_offset: '0.05s' }),
            route('/'),
          ]),
          listener('tight', '0.2s', [route('/lifted', { max_stream_duration: '0s' }), route('/')]),
        ],
        clusters: [staticCluster('slow', port)],
      },
    }, ['--concurrency', '1']);
  });

  after(async () => {
    await stopAllProxies();
    upstream.close();
    upstream.closeAllConnections();
  });

  const get = (listener: string, path: string, headers: Record<string, string> = {}) => httpRequest(`http://127.0.0.1:${proxy.ports.get(listener)}${path}`, { headers });
  const grpc = (timeout?: string) => ({ 'content-type': 'application/grpc', ...(timeout ? { 'grpc-timeout': timeout } : {}) });

  it("a route's limit replaces the connection manager's: a shorter one cuts the stream with 408", async () => {
    const r = await get('long', '/short?wait=1500');
    assert.deepEqual([r.status, r.body], [408, 'downstream duration timeout']);
    assert.equal(await statValue(proxy, 'http.long.downstream_rq_max_duration_reached'), 1);
    assert.equal((await get('long', '/other?wait=300')).status, 200, "the connection manager's 5 s elsewhere");
  });

  it("0 on the route lifts the connection manager's limit", async () => {
    assert.equal((await get('tight', '/lifted?wait=500')).status, 200);
    assert.equal((await get('tight', '/elsewhere?wait=1500')).status, 408);
  });

  it("gRPC: grpc-timeout capped by grpc_timeout_header_max, less the offset, is the limit and goes upstream", async () => {
    seen.length = 0;
    assert.equal((await get('long', '/grpc', grpc('10S'))).status, 200);
    assert.equal((await get('long', '/grpc', grpc('100m'))).status, 200);
    // Without a grpc-timeout, the connection manager's limit, which the upstream is told of.
    assert.equal((await get('long', '/grpc', grpc())).status, 200);
    assert.deepEqual(seen, ['250m', '50m', '5000m']);
    const cut = await get('long', '/grpc?wait=1500', grpc('10S'));
    assert.deepEqual([cut.status, cut.headers['grpc-status']], [200, '4'], 'DEADLINE_EXCEEDED, in a gRPC answer');
  });
});
