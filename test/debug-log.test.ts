import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { connect } from 'node:http2';
import { after, before, describe, it } from 'node:test';
import { routesListener, staticCluster, TCP_PROXY_TYPE } from './helpers/bootstraps.js';
import { CLUSTER_URL, TestControlPlane } from './helpers/control-plane.js';
import { httpRequest, rawExchange, startProxy, stopAllProxies, waitFor, type RunningProxy } from './helpers/proxy.js';

/**
 * A request's story at debug, as Envoy logs it and under its logger names (conn_handler, http,
 * router, pool, client, connection), with Envoy's tags: the connection's id on every line of it,
 * the stream's on every line of the stream. --component-log-level narrows it to one logger, and
 * POST /logging changes it while the proxy runs.
 */

let upstream: Server;
let upstreamPort = 0;
/** A port nothing listens on. */
let closedPort = 0;

before(async () => {
  upstream = createServer((req, res) => {
    req.resume();
    res.end('story');
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  upstreamPort = (upstream.address() as { port: number }).port;
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  closedPort = (probe.address() as { port: number }).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
});

after(async () => {
  await stopAllProxies();
  upstream.close();
});

const bootstrap = () => ({
  admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
  static_resources: {
    listeners: [
      routesListener('edge', [
        { match: { prefix: '/up' }, route: { cluster: 'up' } },
        { match: { prefix: '/refused' }, route: { cluster: 'refused' } },
      ]),
      { name: 'tcp', address: { socket_address: { address: '127.0.0.1', port_value: 0 } }, filter_chains: [{ filters: [{ name: 'envoy.filters.network.tcp_proxy', typed_config: { '@type': TCP_PROXY_TYPE, stat_prefix: 'tcp', cluster: 'up' } }] }] },
    ],
    clusters: [staticCluster('up', upstreamPort), staticCluster('refused', closedPort)],
  },
});

interface Line {
  level: string;
  logger: string;
  message: string;
}

/** The proxy's log as [level, logger, message] (a message runs on to the next line's timestamp). */
function lines(output: string): Line[] {
  const out: Line[] = [];
  for (const chunk of output.split(/\n(?=\[\d{4}-\d\d-\d\d )/)) {
    const m = /^\[[^\]]+\]\[[^\]]+\]\[(\w+)\]\[(\w+)\] \[[^\]]+\] ([^]*)$/.exec(chunk.replace(/\n+$/, '\n'));
    if (m) out.push({ level: m[1]!, logger: m[2]!, message: m[3]!.endsWith('\n\n') ? m[3]!.slice(0, -1) : m[3]!.replace(/\n$/, '') });
  }
  return out;
}

describe('the debug log tells a request\'s story', () => {
  let proxy: RunningProxy;

  before(async () => {
    proxy = await startProxy(bootstrap(), ['--concurrency', '1', '-l', 'debug']);
  });

  it('accept, request headers, route, upstream connection, response, close: in order, tagged', async () => {
    assert.equal((await httpRequest(`http://127.0.0.1:${proxy.ports.get('edge')}/up/story`, { headers: { 'x-told': 'yes' } })).body, 'story');
    const story = await waitFor('the closed connection', () => {
      const all = lines(proxy.output());
      const start = all.findIndex((l) => l.logger === 'http' && l.message.includes("':path', '/up/story'"));
      if (start < 0) return undefined;
      const conn = /"ConnectionId":"(\d+)"/.exec(all[start]!.message)![1];
      // The first test of a fresh proxy: its lines are this request's (the client's connection, the upstream's, the pool's).
      const mine = all;
      return mine.some((l) => l.message.includes(`"ConnectionId":"${conn}"] closing socket:`)) ? { mine, conn } : undefined;
    });
    const stream = /"StreamId":"(\d+)"/.exec(story.mine.find((l) => l.message.includes('request headers complete'))!.message)![1];
    const tagS = `[Tags: "ConnectionId":"${story.conn}","StreamId":"${stream}"] `;
    const tagC = `[Tags: "ConnectionId":"${story.conn}"] `;
    const expected: [string, string][] = [
      ['conn_handler', `${tagC}new connection from 127.0.0.1:`],
      ['http', `${tagC}new stream`],
      ['http', `${tagS}request headers complete (end_stream=true):\n':authority', '127.0.0.1:${proxy.ports.get('edge')}'\n':path', '/up/story'\n':method', 'GET'\n'x-told', 'yes'\n`],
      ['http', `${tagS}request end stream`],
      ['router', `${tagS}cluster 'up' match for URL '/up/story'`],
      ['router', `${tagS}router decoding headers:\n':authority', '127.0.0.1:${proxy.ports.get('edge')}'\n':path', '/up/story'\n':method', 'GET'\n':scheme', 'http'\n'x-told', 'yes'\n`],
      ['pool', 'queueing stream due to no available connections (ready=0 busy=0 connecting=0)'],
      ['pool', 'creating a new connection (connecting=0)'],
      ['client', 'connecting'],
      ['connection', `connecting to 127.0.0.1:${upstreamPort}`],
      ['connection', 'connected'],
      ['pool', 'attaching to next stream'],
      ['router', `${tagS}pool ready`],
      ['router', `${tagS}upstream headers complete: end_stream=false`],
      ['http', `${tagS}encoding headers via codec (end_stream=false):\n':status', '200'\n`],
      ['client', 'response complete'],
      ['pool', 'destroying stream: 0 remaining'],
      ['http', `${tagS}Codec completed encoding stream.`],
      // node's client asked for `connection: close`: the proxy closes it (1; a client's close is `remote close`, then 0).
      ['connection', `${tagC}closing socket: 1`],
    ];
    let at = 0;
    for (const [logger, text] of expected) {
      const i = story.mine.findIndex((l, k) => k >= at && l.level === 'debug' && l.logger === logger && l.message.includes(text));
      assert.ok(i >= 0, `after line ${at}: [${logger}] ${JSON.stringify(text)}\n${story.mine.slice(at).map((l) => `[${l.logger}] ${l.message}`).join('\n')}`);
      at = i + 1;
    }
    // The upstream connection's lines carry its own id, another than the client's.
    const upstreamLine = story.mine.find((l) => l.logger === 'client' && l.message.endsWith('connecting'));
    assert.ok(upstreamLine && !upstreamLine.message.includes(tagC));
  });

  it("an HTTP/2 client's stream, under 'http2': headers complete, then its close with the error code", async () => {
    const session = connect(`http://127.0.0.1:${proxy.ports.get('edge')}`);
    const rq = session.request({ ':path': '/up/h2-story' });
    rq.resume();
    await new Promise((resolve) => rq.once('close', resolve));
    session.close();
    const told = await waitFor('the stream closed', () => {
      const h2 = lines(proxy.output()).filter((l) => l.logger === 'http2' && l.level === 'debug');
      const headers = h2.find((l) => /\] Http2Visitor::OnEndHeadersForStream\(1\)$/.test(l.message));
      const closed = headers && h2.find((l) => l.message === headers.message.replace(/Http2Visitor.*$/, 'stream 1 closed: 0'));
      return headers && closed ? { headers, closed } : undefined;
    });
    assert.match(told.headers.message, /^\[Tags: "ConnectionId":"\d+"\] /);
  });

  it('a request no route takes: the router says so, then the local reply and its details', async () => {
    assert.equal((await httpRequest(`http://127.0.0.1:${proxy.ports.get('edge')}/nowhere`)).status, 404);
    const all = await waitFor('the 404', () => {
      const l = lines(proxy.output());
      return l.some((x) => x.message.includes("':status', '404'")) ? l : undefined;
    });
    const router = all.find((l) => l.logger === 'router' && l.message.endsWith("no route match for URL '/nowhere'"));
    assert.ok(router);
    const tag = router.message.slice(0, router.message.indexOf('] ') + 2);
    assert.ok(all.some((l) => l.logger === 'http' && l.message === `${tag}Sending local reply with details route_not_found`));
  });

  it('a try that cannot connect: the reset and its reasons', async () => {
    assert.equal((await httpRequest(`http://127.0.0.1:${proxy.ports.get('edge')}/refused`)).status, 503);
    const reset = await waitFor('the reset', () => lines(proxy.output()).find((l) => l.logger === 'router' && l.message.includes('upstream reset: reset reason: remote connection failure, transport failure reason: delayed connect error: Connection refused')));
    assert.match(reset.message, /^\[Tags: "ConnectionId":"\d+","StreamId":"\d+"\] /);
  });
});

describe('the debug log of a TCP proxy session', () => {
  it('tells the session and its upstream connection, as Envoy\'s tcp_proxy does', async () => {
    const proxy = await startProxy(bootstrap(), ['--concurrency', '1', '-l', 'debug']);
    const reply = await rawExchange(proxy.ports.get('tcp')!, 'GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n');
    assert.match(reply, /^HTTP\/1\.1 200 [^]*story$/);
    const all = await waitFor('the session', () => {
      const l = lines(proxy.output());
      return l.some((x) => x.logger === 'connection' && x.message.endsWith(' connected')) ? l : undefined;
    });
    const session = all.find((l) => l.logger === 'filter' && l.message.endsWith('new tcp proxy session'))!;
    const tag = session.message.slice(0, session.message.indexOf('] ') + 2);
    assert.ok(all.some((l) => l.logger === 'filter' && l.message === `${tag}Creating connection to cluster up`));
    assert.ok(all.some((l) => l.logger === 'connection' && l.message.endsWith(`connecting to 127.0.0.1:${upstreamPort}`) && !l.message.startsWith(tag)));
    await proxy.stop();
  });
});

describe('the debug log of health checks', () => {
  it("tells each HTTP check's answer with the host's flags, and a check that cannot connect, under 'hc'", async () => {
    const b = bootstrap() as Record<string, any>;
    const checks = [{ timeout: '1s', interval: '0.2s', unhealthy_threshold: 1, healthy_threshold: 1, http_health_check: { path: '/health' } }];
    for (const c of b.static_resources.clusters) c.health_checks = checks;
    const proxy = await startProxy(b, ['--concurrency', '1', '--component-log-level', 'hc:debug']);
    const hc = await waitFor('both checks told', () => {
      const l = lines(proxy.output()).filter((x) => x.logger === 'hc' && x.level === 'debug');
      const ok = l.find((x) => /\] hc response_code=200 health_flags=(healthy|\/failed_active_hc)$/.test(x.message));
      const error = l.find((x) => /\] connection\/stream error health_flags=/.test(x.message));
      return ok && error ? { ok, error } : undefined;
    });
    assert.match(hc.ok.message, /^\[Tags: "ConnectionId":"\d+"\] /);
    assert.match(hc.error.message, /^\[Tags: "ConnectionId":"\d+"\] connection\/stream error health_flags=\/failed_active_hc$/);
    await proxy.stop();
  });

  it("tells a TCP check's data, pass, unexpected close and timeout, as Envoy's TCP checker", async () => {
    const b = bootstrap() as Record<string, any>;
    // 'up' answers HTTP: its reply holds the expected bytes. 'refused' closes, and a third host takes the connection and says nothing.
    const silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    b.static_resources.clusters.push(staticCluster('silent', (silent.address() as { port: number }).port));
    const checks = [{ timeout: '0.3s', interval: '0.2s', unhealthy_threshold: 1, healthy_threshold: 1, tcp_health_check: { send: { text: Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n').toString('hex') }, receive: [{ text: Buffer.from('story').toString('hex') }] } }];
    for (const c of b.static_resources.clusters) c.health_checks = checks;
    const proxy = await startProxy(b, ['--concurrency', '1', '--component-log-level', 'hc:debug']);
    const at = (port: number) => `health_check_address=127.0.0.1:${port}`;
    const told = await waitFor('every TCP check told', () => {
      const l = lines(proxy.output()).filter((x) => x.logger === 'hc' && x.level === 'debug').map((x) => x.message);
      const find = (re: RegExp) => l.find((m) => re.test(m));
      const found = {
        pending: find(/\] hc tcp total pending buffer=\d+$/),
        passed: find(new RegExp(`\\] hc tcp healthcheck passed, ${at(upstreamPort)}$`)),
        closed: find(new RegExp(`\\] hc tcp connection unexpected closed, ${at(closedPort)}$`)),
        timeout: find(/\] hc tcp connection timeout, health_flags=[^,]+, health_check_address=127\.0\.0\.1:\d+$/),
      };
      return Object.values(found).every(Boolean) ? found : undefined;
    });
    assert.match(told.passed!, /^\[Tags: "ConnectionId":"\d+"\] hc tcp healthcheck passed/);
    await proxy.stop();
    silent.close();
  });
});

describe('the debug log of xDS', () => {
  it("tells each response received and each accepted, under 'config', in Envoy's words", async () => {
    const cp = await TestControlPlane.start();
    try {
      cp.set(CLUSTER_URL, 'v1', [{ '@type': CLUSTER_URL, ...staticCluster('from-cds', upstreamPort) }]);
      const proxy = await startProxy({
        node: { id: 'n', cluster: 'c' },
        admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
        static_resources: { clusters: [{ ...staticCluster('xds', cp.port), typed_extension_protocol_options: { 'envoy.extensions.upstreams.http.v3.HttpProtocolOptions': { '@type': 'type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions', explicit_http_config: { http2_protocol_options: {} } } } }] },
        dynamic_resources: { ads_config: { api_type: 'GRPC', transport_api_version: 'V3', grpc_services: [{ envoy_grpc: { cluster_name: 'xds' } }] }, cds_config: { ads: {}, resource_api_version: 'V3' } },
      }, ['--concurrency', '1', '--component-log-level', 'config:debug']);
      await waitFor('both lines', () => {
        const l = lines(proxy.output()).filter((x) => x.logger === 'config' && x.level === 'debug').map((x) => x.message);
        return l.includes(`Received gRPC message for ${CLUSTER_URL} at version v1`) && l.includes(`gRPC config for ${CLUSTER_URL} accepted with 1 resources with version v1`) ? true : undefined;
      });
      await proxy.stop();
    } finally {
      cp.stop();
    }
  });
});

describe('narrowing the debug log', () => {
  it('--component-log-level router:debug: the router\'s lines only', async () => {
    const proxy = await startProxy(bootstrap(), ['--concurrency', '1', '--component-log-level', 'router:debug']);
    assert.equal((await httpRequest(`http://127.0.0.1:${proxy.ports.get('edge')}/up/narrow`)).status, 200);
    const debug = await waitFor('the router line', () => {
      const d = lines(proxy.output()).filter((l) => l.level === 'debug');
      return d.some((l) => l.message.includes("cluster 'up' match for URL '/up/narrow'")) ? d : undefined;
    });
    assert.deepEqual([...new Set(debug.map((l) => l.logger))], ['router']);
    await proxy.stop();
  });

  it('POST /logging?http=debug while it runs: the connection manager\'s lines from then on', async () => {
    const proxy = await startProxy(bootstrap(), ['--concurrency', '1']);
    const url = `http://127.0.0.1:${proxy.ports.get('edge')}/up/`;
    assert.equal((await httpRequest(`${url}before`)).status, 200);
    assert.equal((await httpRequest(`http://${proxy.admin}/logging?http=debug`, { method: 'POST' })).status, 200);
    await waitFor('the request told', async () => {
      await httpRequest(`${url}after`);
      return lines(proxy.output()).some((l) => l.logger === 'http' && l.message.includes("':path', '/up/after'")) ? true : undefined;
    });
    assert.ok(!lines(proxy.output()).some((l) => l.message.includes('/up/before')));
    await proxy.stop();
  });
});
