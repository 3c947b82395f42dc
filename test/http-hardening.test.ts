import assert from 'node:assert/strict';
import { connect as h2connect } from 'node:http2';
import { request } from 'node:http';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { hcmFilter, routesListener, staticCluster } from './helpers/bootstraps.js';
import { connectionsClosedByServer, GARBAGE, PREFACE, rapidResetStorm, SETTINGS } from './helpers/http2-abuse.js';
import { startProxy, statValue, stopAllProxies, waitFor, withDeadline, type RunningProxy } from './helpers/proxy.js';
import { startUpstream, type Upstream } from './helpers/upstream.js';

/**
 * Issue 13's HTTP findings, kept as tests: an upload with `Expect: 100-continue`, an HTTP/2-only
 * listener, duplicate Host, an absolute-form target, and HTTP/2 connections that break the
 * protocol or reset streams as fast as they open them (CVE-2023-44487).
 */

let upstream: Upstream;
let proxy: RunningProxy;
let web: number;
let h2only: number;

before(async () => {
  upstream = await startUpstream('up');
  const h2listener = { name: 'h2only', address: { socket_address: { address: '127.0.0.1', port_value: 0 } }, filter_chains: [{ filters: [hcmFilter('h2only', [{ match: { prefix: '/' }, direct_response: { status: 200, body: { inline_string: 'h2 only' } } }])] }] };
  (h2listener.filter_chains[0]!.filters[0]!.typed_config as Record<string, unknown>).codec_type = 'HTTP2';
  const webListener = routesListener('web', [{ match: { prefix: '/' }, route: { cluster: 'up' } }]);
  const vhosts = (webListener as any).filter_chains[0].filters[0].typed_config.route_config.virtual_hosts;
  vhosts.unshift({ name: 'other', domains: ['other.example'], routes: [{ match: { prefix: '/' }, direct_response: { status: 200, body: { inline_string: 'other virtual host' } } }] });
  proxy = await startProxy(
    {
      admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
      static_resources: { listeners: [webListener, h2listener], clusters: [staticCluster('up', upstream.port)] },
      // Envoy's rapid-reset guard at a tenth of its default, so that it (and not nghttp2's own
      // reset rate limit, which also ends such a connection) is what the test sees acting.
      layered_runtime: { layers: [{ name: 'static', static_layer: { 'overload.premature_reset_total_stream_count': 50 } }] },
    },
    ['--concurrency', '1'],
  );
  web = proxy.ports.get('web')!;
  h2only = proxy.ports.get('h2only')!;
});

after(async () => {
  await stopAllProxies();
  await upstream.close();
});

/** Bytes in, everything the proxy answers until it closes the connection. */
function raw(port: number, text: string): Promise<string> {
  return withDeadline(
    'the proxy to answer and close',
    new Promise((resolve, reject) => {
      let out = '';
      const s = connect(port, '127.0.0.1', () => s.write(text));
      s.on('data', (d) => (out += d));
      s.on('close', () => resolve(out));
      s.on('error', reject);
    }),
  );
}

describe('Expect: 100-continue', () => {
  it('answers 100 Continue itself and the 2 MB body reaches the upstream, without the expectation', async () => {
    const body = Buffer.alloc(2 * 1024 * 1024, 'a');
    let continued = false;
    const res = await withDeadline(
      'the upload',
      new Promise<{ status: number; text: string }>((resolve, reject) => {
        const rq = request({ host: '127.0.0.1', port: web, method: 'POST', path: '/echo', headers: { expect: '100-continue', 'content-length': body.length } }, (r) => {
          let text = '';
          r.setEncoding('utf8');
          r.on('data', (d) => (text += d));
          r.on('end', () => resolve({ status: r.statusCode!, text }));
        });
        rq.on('continue', () => {
          continued = true;
          rq.end(body);
        });
        rq.on('error', reject);
      }),
    );
    assert.ok(continued, 'the client got 100 Continue');
    assert.equal(res.status, 200);
    const echo = JSON.parse(res.text);
    assert.equal(echo.body.length, body.length);
    assert.equal(echo.headers.expect, undefined, 'the upstream is not asked to expect anything');
  });

  it('over HTTP/2 too', async () => {
    const client = h2connect(`http://127.0.0.1:${web}`);
    try {
      const stream = client.request({ ':method': 'POST', ':path': '/echo', expect: '100-continue' });
      const text = await withDeadline(
        'the HTTP/2 upload',
        new Promise<string>((resolve) => {
          let t = '';
          stream.on('continue', () => stream.end(Buffer.alloc(300_000, 'b')));
          stream.setEncoding('utf8');
          stream.on('data', (d) => (t += d));
          stream.on('end', () => resolve(t));
        }),
      );
      const echo = JSON.parse(text);
      assert.equal(echo.body.length, 300_000);
      assert.equal(echo.headers.expect, undefined);
    } finally {
      client.close();
    }
  });
});

describe('a listener with codec_type: HTTP2', () => {
  it('serves h2c with prior knowledge, and closes an HTTP/1 connection instead of holding it', async () => {
    const client = h2connect(`http://127.0.0.1:${h2only}`);
    try {
      const text = await withDeadline(
        'an h2c answer',
        new Promise<string>((resolve, reject) => {
          const s = client.request({ ':path': '/' });
          let t = '';
          s.setEncoding('utf8');
          s.on('data', (d) => (t += d));
          s.on('end', () => resolve(t));
          s.on('error', reject);
        }),
      );
      assert.equal(text, 'h2 only');
    } finally {
      client.close();
    }
    const answer = await raw(h2only, 'GET / HTTP/1.1\r\nhost: x\r\n\r\n');
    assert.doesNotMatch(answer, /^HTTP\/1\.1 200/, 'not served as HTTP/1');
    await waitFor('the HTTP/2-only listener to hold no connection', async () => ((await statValue(proxy, 'http.h2only.downstream_cx_active')) === 0 ? true : undefined));
  });
});

describe('HTTP/1 request targets', () => {
  it('answers 400 and closes on a duplicate Host (RFC 9112 §3.2)', async () => {
    const before = await statValue(proxy, 'http.web.downstream_cx_protocol_error');
    const hits = upstream.hits;
    const answer = await raw(web, 'GET /echo HTTP/1.1\r\nHost: a.example\r\nHost: b.example\r\n\r\n');
    assert.match(answer, /^HTTP\/1\.1 400 Bad Request\r\n/);
    assert.match(answer, /\r\nconnection: close\r\n/i);
    assert.equal(upstream.hits, hits, 'nothing reached the upstream');
    assert.equal(await statValue(proxy, 'http.web.downstream_cx_protocol_error'), before + 1);
  });

  it('routes an absolute-form target by its authority, whatever Host says, and sends the upstream origin form', async () => {
    const other = await raw(web, 'GET http://other.example/page HTTP/1.1\r\nHost: elsewhere.example\r\nConnection: close\r\n\r\n');
    assert.match(other, /other virtual host$/);
    const upstreamAnswer = await raw(web, 'GET http://svc.example:8080/echo?x=1 HTTP/1.1\r\nHost: elsewhere.example\r\nConnection: close\r\n\r\n');
    const echo = JSON.parse(upstreamAnswer.slice(upstreamAnswer.indexOf('\r\n\r\n') + 4));
    assert.deepEqual([echo.url, echo.headers.host], ['/echo?x=1', 'svc.example:8080']);
  });
});

describe('HTTP/2 abuse', () => {
  it('closes every connection that sent garbage frames, and the connection gauge returns to 0', async () => {
    // The clients never close: every one of these connections must be closed by the proxy.
    await withDeadline('the proxy to close all 40 connections', connectionsClosedByServer(h2only, (i) => GARBAGE[i % GARBAGE.length]!, 40), 60_000);
    await waitFor('the connection gauges back to 0', async () => ((await statValue(proxy, 'http.h2only.downstream_cx_active')) === 0 ? true : undefined));
    assert.ok((await statValue(proxy, 'http.h2only.downstream_cx_protocol_error')) + (await statValue(proxy, 'http2.keepalive_timeout')) >= 40);
  });

  it('closes a connection that floods SETTINGS, and serves others meanwhile', async () => {
    const closed = connectionsClosedByServer(h2only, () => Buffer.concat([PREFACE, ...Array.from({ length: 20_000 }, () => SETTINGS)]), 1);
    const client = h2connect(`http://127.0.0.1:${h2only}`);
    try {
      const served = await withDeadline(
        'another client to be served during the flood',
        new Promise<number>((resolve, reject) => {
          const rq = client.request({ ':path': '/' });
          rq.on('response', (h) => resolve(Number(h[':status'])));
          rq.on('error', reject);
          rq.resume();
        }),
      );
      assert.equal(served, 200);
    } finally {
      client.close();
    }
    await withDeadline('the proxy to close the flooding connection', closed, 60_000);
  });

  it('aborts a connection whose streams are reset as fast as they open (rapid reset), and serves others meanwhile', async () => {
    const storm = await withDeadline('the storm to end', rapidResetStorm(web, '/hold?key=never', 5000));
    assert.ok(storm.closedByServer, `the proxy let ${storm.opened} streams be opened and reset without closing the connection`);
    assert.equal(await statValue(proxy, 'http.web.downstream_rq_too_many_premature_resets'), 1);
    assert.ok((await statValue(proxy, 'http.web.downstream_rq_rx_reset')) >= 25);
    const other = await raw(web, 'GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n');
    assert.match(other, /^HTTP\/1\.1 200 /, 'other clients are served');
    await waitFor("the web listener's connections back to 0", async () => ((await statValue(proxy, 'http.web.downstream_cx_active')) === 0 ? true : undefined));
  });
});
