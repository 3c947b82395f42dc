import assert from 'node:assert/strict';
import { constants, createServer, type Http2Server } from 'node:http2';
import { after, before, describe, it } from 'node:test';
import { routesListener, staticCluster } from './helpers/bootstraps.js';
import { httpRequest, startProxy, statValue, stopAllProxies, type RunningProxy } from './helpers/proxy.js';

/**
 * An HTTP/2 upstream that resets a stream before answering: the client gets Envoy's 503 for a
 * reset before headers (never an empty answer), and the cluster counts a reset with NO_ERROR in
 * upstream_rq_rx_reset_no_error, any other in upstream_rq_rx_reset, as Envoy's does; the
 * connection, which carries on, is not counted as destroyed.
 */

let server: Http2Server;
let proxy: RunningProxy;

before(async () => {
  server = createServer();
  server.on('stream', (stream, headers) => {
    stream.on('error', () => {}); // closing with an error code errors this side's stream too
    if (headers[':path'] === '/no-error') stream.close(constants.NGHTTP2_NO_ERROR);
    else if (headers[':path'] === '/error') stream.close(constants.NGHTTP2_INTERNAL_ERROR);
    else {
      stream.respond({ ':status': 200 });
      stream.end('fine');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const cluster = { ...staticCluster('h2', (server.address() as { port: number }).port), http2_protocol_options: {} };
  proxy = await startProxy(
    {
      admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
      static_resources: { listeners: [routesListener('web', [{ match: { prefix: '/' }, route: { cluster: 'h2' } }])], clusters: [cluster] },
    },
    ['--concurrency', '1'],
  );
});

after(async () => {
  await stopAllProxies();
  server.close();
});

const get = (path: string) => httpRequest(`http://127.0.0.1:${proxy.ports.get('web')}${path}`);

describe('an HTTP/2 upstream that resets a stream before its answer', () => {
  it('with NO_ERROR: 503 reset before headers, upstream_rq_rx_reset_no_error', async () => {
    const r = await get('/no-error');
    assert.equal(r.status, 503);
    assert.match(r.body, /^upstream connect error or disconnect\/reset before headers/);
    assert.equal(await statValue(proxy, 'cluster.h2.upstream_rq_rx_reset_no_error'), 1);
    assert.equal(await statValue(proxy, 'cluster.h2.upstream_rq_rx_reset'), 0);
    assert.equal((await get('/')).body, 'fine', 'the connection carries on');
  });

  it('with an error code: upstream_rq_rx_reset', async () => {
    assert.equal((await get('/error')).status, 503);
    assert.equal(await statValue(proxy, 'cluster.h2.upstream_rq_rx_reset'), 1);
    assert.equal(await statValue(proxy, 'cluster.h2.upstream_rq_rx_reset_no_error'), 1);
  });

  it('leaves the connection figures alone: a stream reset destroys no connection and breaks no protocol', async () => {
    assert.equal(await statValue(proxy, 'cluster.h2.upstream_cx_destroy_with_active_rq'), 0);
    assert.equal(await statValue(proxy, 'cluster.h2.upstream_cx_destroy_remote_with_active_rq'), 0);
    assert.equal(await statValue(proxy, 'cluster.h2.upstream_cx_protocol_error'), 0);
    assert.equal(await statValue(proxy, 'cluster.h2.upstream_cx_total'), 1, 'one connection carried every request');
  });
});
