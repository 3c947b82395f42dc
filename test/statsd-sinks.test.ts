import assert from 'node:assert/strict';
import { createSocket, type Socket } from 'node:dgram';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { routesListener } from './helpers/bootstraps.js';
import { httpRequest, startProxy, stopAllProxies, waitFor, type RunningProxy } from './helpers/proxy.js';

/**
 * The statsd and DogStatsD sinks, as a statsd server sees them: a UDP socket in the test parses
 * every datagram that arrives. Lines in Envoy's formats: counters' increases since the last flush
 * (`|c`), gauges (`|g`), histogram samples (`|ms`); DogStatsD with the tag-extracted name and its
 * tags, packed into datagrams of at most max_bytes_per_datagram.
 */

let statsd: Socket;
let dog: Socket;
const statsdLines: string[] = [];
const dogDatagrams: string[] = [];
let proxy: RunningProxy;

async function udpServer(into: (text: string) => void): Promise<Socket> {
  const s = createSocket('udp4');
  s.on('message', (m) => into(m.toString()));
  s.bind(0, '127.0.0.1');
  await once(s, 'listening');
  return s;
}

before(async () => {
  statsd = await udpServer((t) => statsdLines.push(t));
  dog = await udpServer((t) => dogDatagrams.push(t));
  const port = (s: Socket) => (s.address() as AddressInfo).port;
  proxy = await startProxy(
    {
      stats_flush_interval: '0.2s',
      stats_sinks: [
        { name: 'envoy.stat_sinks.statsd', typed_config: { '@type': 'type.googleapis.com/envoy.config.metrics.v3.StatsdSink', address: { socket_address: { protocol: 'UDP', address: '127.0.0.1', port_value: port(statsd) } } } },
        { name: 'envoy.stat_sinks.dog_statsd', typed_config: { '@type': 'type.googleapis.com/envoy.config.metrics.v3.DogStatsdSink', prefix: 'edge', max_bytes_per_datagram: 512, address: { socket_address: { protocol: 'UDP', address: '127.0.0.1', port_value: port(dog) } } } },
      ],
      admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
      static_resources: { listeners: [routesListener('ingress', [{ match: { prefix: '/' }, direct_response: { status: 200, body: { inline_string: 'ok' } } }])], clusters: [] },
    },
    ['--concurrency', '1'],
  );
});

after(async () => {
  await stopAllProxies();
  statsd.close();
  dog.close();
});

describe('the statsd sink', () => {
  it("sends counters' increases and gauges a line a datagram, and histogram samples as they are recorded, in statsd's format", async () => {
    for (let i = 0; i < 3; i++) await httpRequest(`http://127.0.0.1:${proxy.ports.get('ingress')}/`);
    const increases = () => statsdLines.filter((l) => l.startsWith('envoy.http.ingress.downstream_rq_total:')).map((l) => Number(/:(\d+)\|c$/.exec(l)![1]));
    await waitFor('the three requests counted', () => (increases().reduce((a, b) => a + b, 0) >= 3 ? true : undefined));
    assert.equal(increases().reduce((a, b) => a + b, 0), 3, 'each flush sends the increase since the last, so they add up to the total');
    assert.ok(statsdLines.filter((l) => !l.includes('|ms')).every((l) => !l.includes('\n')), 'a flush sends a line a datagram');
    await waitFor('a gauge', () => statsdLines.find((l) => /^envoy\.http\.ingress\.downstream_cx_active:\d+\|g$/.test(l)));
    const samples = () => statsdLines.flatMap((d) => d.split('\n')).filter((l) => /^envoy\.http\.ingress\.downstream_rq_time:\d+(\.\d+)?\|ms$/.test(l));
    await waitFor('the request time samples', () => (samples().length >= 3 ? true : undefined));
  });
});

describe('the DogStatsD sink', () => {
  it('sends the tag-extracted names with their tags, several lines a datagram up to max_bytes_per_datagram', async () => {
    await httpRequest(`http://127.0.0.1:${proxy.ports.get('ingress')}/`);
    const lines = () => dogDatagrams.flatMap((d) => d.split('\n'));
    await waitFor('a tagged counter', () => lines().find((l) => /^edge\.http\.downstream_rq_total:\d+\|c\|#envoy\.http_conn_manager_prefix:ingress$/.test(l)));
    assert.ok(lines().some((l) => /^edge\.http\.downstream_rq_xx:\d+\|c\|#envoy\.response_code_class:2,envoy\.http_conn_manager_prefix:ingress$/.test(l)), lines().filter((l) => l.includes('rq_xx')).join('\n'));
    assert.ok(dogDatagrams.some((d) => d.includes('\n')), 'lines are packed');
    assert.ok(dogDatagrams.every((d) => Buffer.byteLength(d) <= 512 || !d.includes('\n')), 'no packed datagram over max_bytes_per_datagram');
  });
});
