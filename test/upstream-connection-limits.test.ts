import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createH2Server, type Http2Server, type ServerHttp2Session } from 'node:http2';
import type { Socket } from 'node:net';
import { after, describe, it } from 'node:test';
import { routesListener, staticCluster } from './helpers/bootstraps.js';
import { runProxy } from './helpers/cli.js';
import { httpRequest, startProxy, statValue, stopAllProxies, waitFor, withDeadline, type RunningProxy } from './helpers/proxy.js';

/**
 * A cluster's common_http_protocol_options, as Envoy applies them to its upstream connections:
 * max_requests_per_connection, idle_timeout and max_connection_duration retire connections
 * (upstream_cx_max_requests, _idle_timeout, _max_duration_reached; what each carried in
 * upstream_rq_per_cx), and max_stream_duration cuts a try (upstream_rq_max_duration_reached,
 * 504 "upstream max stream duration reached", flag UMSDR). Over HTTP/1.1 and HTTP/2, in the
 * extension's place and in the deprecated Cluster fields older bootstraps use.
 */

const HTTP_OPTIONS = 'envoy.extensions.upstreams.http.v3.HttpProtocolOptions';

const closers: (() => void)[] = [];
after(async () => {
  await stopAllProxies();
  for (const close of closers) close();
});

/** An HTTP/1.1 upstream that counts its connections (and their closes); `handle` answers unless it returns false. */
async function h1Upstream(handle?: (req: IncomingMessage, res: ServerResponse) => boolean | void): Promise<{ port: number; connections: () => number; closed: () => number }> {
  let connections = 0;
  let closed = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((req, res) => {
    if (handle?.(req, res) === false) return;
    res.end('ok');
  });
  server.on('connection', (s: Socket) => {
    connections++;
    sockets.add(s);
    s.once('close', () => {
      closed++;
      sockets.delete(s);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => {
    for (const s of sockets) s.destroy();
    server.close();
  });
  return { port: (server.address() as { port: number }).port, connections: () => connections, closed: () => closed };
}

function clusterWith(port: number, common: Record<string, unknown>, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    ...staticCluster('backend', port),
    typed_extension_protocol_options: {
      [HTTP_OPTIONS]: { '@type': `type.googleapis.com/${HTTP_OPTIONS}`, common_http_protocol_options: common, explicit_http_config: { http_protocol_options: {} } },
    },
    ...extra,
  };
}

function bootstrap(cluster: Record<string, unknown>): object {
  const listener = routesListener('web', [{ match: { prefix: '/' }, route: { cluster: 'backend', timeout: '0s' } }]);
  return {
    admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
    static_resources: { listeners: [listener], clusters: [cluster] },
  };
}

const get = (proxy: RunningProxy, path = '/') => httpRequest(`http://127.0.0.1:${proxy.ports.get('web')!}${path}`, { agent: false });

/** upstream_rq_per_cx's count and sum, from the Prometheus histogram. */
async function perConnection(proxy: RunningProxy): Promise<{ count: number; sum: number }> {
  const body = (await httpRequest(`http://${proxy.admin}/stats/prometheus`)).body;
  const count = /^envoy_cluster_upstream_rq_per_cx_count\{envoy_cluster_name="backend"\} (\d+)/m.exec(body);
  const sum = /^envoy_cluster_upstream_rq_per_cx_sum\{envoy_cluster_name="backend"\} ([\d.]+)/m.exec(body);
  return { count: Number(count?.[1] ?? NaN), sum: Number(sum?.[1] ?? NaN) };
}

describe("a cluster's common_http_protocol_options (HTTP/1.1 upstream)", () => {
  it('max_requests_per_connection: each connection carries that many requests, then closes', async () => {
    const upstream = await h1Upstream();
    const proxy = await startProxy(bootstrap(clusterWith(upstream.port, { max_requests_per_connection: 2 })), ['--concurrency', '1']);
    for (let i = 0; i < 5; i++) assert.equal((await get(proxy)).status, 200);
    assert.equal(upstream.connections(), 3, '2 + 2 + 1 requests');
    assert.equal(await statValue(proxy, 'cluster.backend.upstream_cx_max_requests'), 2, 'counted as each connection took its last request');
    await waitFor('the two full connections closed', () => (upstream.closed() >= 2 ? true : undefined));
    await waitFor('their requests recorded', async () => ((await perConnection(proxy)).count >= 2 ? true : undefined));
    const { count, sum } = await perConnection(proxy);
    // The histogram's sum is kept as its buckets approximate it.
    assert.equal(Math.round(sum / count), 2, `each closed connection carried 2 requests (count ${count}, sum ${sum})`);
  });

  it('idle_timeout: a connection with no request for that long is closed by the proxy', async () => {
    const upstream = await h1Upstream();
    const proxy = await startProxy(bootstrap(clusterWith(upstream.port, { idle_timeout: '0.3s' })), ['--concurrency', '1']);
    assert.equal((await get(proxy)).status, 200);
    await waitFor('the idle connection closed', async () => ((await statValue(proxy, 'cluster.backend.upstream_cx_idle_timeout')) === 1 ? true : undefined));
    await waitFor('the upstream to see it go', () => (upstream.closed() === 1 ? true : undefined));
    assert.equal(await statValue(proxy, 'cluster.backend.upstream_cx_destroy_local'), 1);
    assert.equal((await get(proxy)).status, 200, 'the next request opens another');
    assert.equal(upstream.connections(), 2);
  });

  it('max_connection_duration: a busy connection finishes its response, takes no other request, and closes', async () => {
    let release: (() => void) | undefined;
    const upstream = await h1Upstream((req, res) => {
      if (req.url !== '/slow') return;
      release = () => res.end('slow done');
      return false;
    });
    const proxy = await startProxy(bootstrap(clusterWith(upstream.port, { max_connection_duration: '0.3s' })), ['--concurrency', '1']);
    const slow = get(proxy, '/slow');
    await waitFor('the slow request upstream', () => release);
    await waitFor('the connection to reach its duration', async () => ((await statValue(proxy, 'cluster.backend.upstream_cx_max_duration_reached')) === 1 ? true : undefined));
    assert.equal(upstream.closed(), 0, 'not cut while it carries a request');
    release!();
    const answer = await withDeadline('the slow answer', slow);
    assert.equal(answer.status, 200);
    assert.equal(answer.body, 'slow done');
    await waitFor('the connection closed after its response', () => (upstream.closed() === 1 ? true : undefined));
    assert.equal((await get(proxy)).status, 200);
    assert.equal(upstream.connections(), 2, 'the next request went on a new connection');
  });

  it('max_stream_duration: a try that outlives it is reset and answered 504, retried under retry_on reset', async () => {
    let requests = 0;
    const upstream = await h1Upstream(() => {
      requests++;
      return false; // never answers
    });
    const cluster = clusterWith(upstream.port, { max_stream_duration: '0.2s' });
    const proxy = await startProxy(bootstrap(cluster), ['--concurrency', '1']);
    const answer = await withDeadline('the local reply', get(proxy));
    assert.equal(answer.status, 504);
    assert.equal(answer.body, 'upstream max stream duration reached');
    assert.equal(await statValue(proxy, 'cluster.backend.upstream_rq_max_duration_reached'), 1);
    assert.equal(await statValue(proxy, 'cluster.backend.upstream_rq_tx_reset'), 1, 'the proxy reset the try');
    assert.equal(requests, 1);

    const retrying = bootstrap(cluster) as { static_resources: { listeners: { filter_chains: { filters: { typed_config: { route_config: { virtual_hosts: { routes: { route: Record<string, unknown> }[] }[] } } }[] }[] }[] } };
    retrying.static_resources.listeners[0]!.filter_chains[0]!.filters[0]!.typed_config.route_config.virtual_hosts[0]!.routes[0]!.route.retry_policy = { retry_on: 'reset', num_retries: 1 };
    const proxy2 = await startProxy(retrying, ['--concurrency', '1']);
    assert.equal((await withDeadline('the retried local reply', get(proxy2))).status, 504);
    assert.equal(await statValue(proxy2, 'cluster.backend.upstream_rq_max_duration_reached'), 2, 'the try and its retry');
    assert.equal(await statValue(proxy2, 'cluster.backend.upstream_rq_retry'), 1);
  });
});

describe("a cluster's common_http_protocol_options (HTTP/2 upstream)", () => {
  /** An h2c upstream that counts its sessions and their closes. */
  async function h2Upstream(): Promise<{ port: number; sessions: () => number; closed: () => number }> {
    let sessions = 0;
    let closed = 0;
    const open = new Set<ServerHttp2Session>();
    const server: Http2Server = createH2Server();
    server.on('session', (s: ServerHttp2Session) => {
      sessions++;
      open.add(s);
      s.once('close', () => {
        closed++;
        open.delete(s);
      });
    });
    server.on('stream', (stream) => {
      stream.respond({ ':status': 200 });
      stream.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(() => {
      for (const s of open) s.destroy();
      server.close();
    });
    return { port: (server.address() as { port: number }).port, sessions: () => sessions, closed: () => closed };
  }

  it('max_requests_per_connection (the deprecated Cluster field) and idle_timeout retire sessions with a GOAWAY', async () => {
    const upstream = await h2Upstream();
    const cluster = {
      ...staticCluster('backend', upstream.port),
      http2_protocol_options: {},
      max_requests_per_connection: 2,
      common_http_protocol_options: { idle_timeout: '0.3s' },
    };
    const proxy = await startProxy(bootstrap(cluster), ['--concurrency', '1']);
    for (let i = 0; i < 3; i++) {
      const answer = await get(proxy);
      assert.equal(answer.status, 200, `request ${i}: ${answer.body}`);
    }
    assert.equal(upstream.sessions(), 2, '2 streams on the first session, the third on a new one');
    assert.equal(await statValue(proxy, 'cluster.backend.upstream_cx_max_requests'), 1);
    await waitFor('the first session closed', () => (upstream.closed() >= 1 ? true : undefined));
    await waitFor('the second to idle out', async () => ((await statValue(proxy, 'cluster.backend.upstream_cx_idle_timeout')) === 1 ? true : undefined));
    await waitFor('both sessions gone', () => (upstream.closed() === 2 ? true : undefined));
    assert.equal(await statValue(proxy, 'cluster.backend.http2.goaway_sent'), 2);
    await waitFor('their streams recorded', async () => ((await perConnection(proxy)).count === 2 ? true : undefined));
    assert.equal(Math.round((await perConnection(proxy)).sum), 3, '2 + 1 streams');
  });
});

describe('loading the options', () => {
  it('refuses what is not applied upstream, naming the field', async () => {
    const run = await runProxy(['--mode', 'validate', '--config-yaml', JSON.stringify(bootstrap(clusterWith(9, { max_headers_count: 50 })))]);
    assert.notEqual(run.code, 0);
    assert.match(run.stderr, /common_http_protocol_options\.max_headers_count: not applied to upstream responses/);
  });
});
