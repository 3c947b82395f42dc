import assert from 'node:assert/strict';
import { createSocket, type Socket } from 'node:dgram';
import { after, before, describe, it } from 'node:test';
import { MergedStats } from '../../../stats/merged.js';
import { StatsdSinks } from './flush.js';
import { sentToSinks, statsdLine, type StatsdSink } from './statsd.js';

/**
 * envoy.stat_sinks.statsd and dog_statsd alone (Envoy's udp_statsd_test): the line formats, what
 * is never sent, and a flush's counters and gauges as datagrams to a real UDP socket.
 */

const sink = (tagged: boolean): StatsdSink => ({ prefix: 'envoy', tagged, maxBytes: 0, stream: false, send: () => {}, close: () => {} });

describe('the statsd sinks', () => {
  let receiver: Socket;
  let port = 0;
  const received: string[] = [];
  before(async () => {
    receiver = createSocket('udp4');
    receiver.on('message', (m) => received.push(m.toString('utf8')));
    await new Promise<void>((resolve) => receiver.bind(0, '127.0.0.1', resolve));
    port = receiver.address().port;
  });
  after(() => receiver.close());

  it("writes statsd's line with the full name, and DogStatsD's with the tags taken out", () => {
    assert.equal(statsdLine(sink(false), 'cluster.backend.upstream_rq_total', 3, 'c'), 'envoy.cluster.backend.upstream_rq_total:3|c');
    assert.equal(statsdLine(sink(true), 'cluster.backend.upstream_rq_total', 3, 'c'), 'envoy.cluster.upstream_rq_total:3|c|#envoy.cluster_name:backend');
    assert.equal(sentToSinks('cluster.backend.upstream_rq_total'), true);
    assert.equal(sentToSinks('_host.backend.127.0.0.1:80.rq'), false, "this proxy's internal figures never go");
  });

  it('sends at each flush the counters\' increases since the last and the gauges, only those ever used', async () => {
    const sinks = new StatsdSinks({ stats_sinks: [{ name: 'envoy.stat_sinks.statsd', typed_config: { '@type': 'type.googleapis.com/envoy.config.metrics.v3.StatsdSink', address: { socket_address: { address: '127.0.0.1', port_value: port } }, prefix: 'edge' } }] });
    try {
      const merged = new MergedStats();
      merged.counters.set('http.ingress.downstream_rq_total', { value: 5, used: true });
      merged.counters.set('http.ingress.never', { value: 0, used: false });
      merged.gauges.set('server.live', { bySource: new Map([['w0', 1]]), total: 1, used: true, local: false });
      sinks.flush(merged);
      merged.counters.set('http.ingress.downstream_rq_total', { value: 7, used: true });
      sinks.flush(merged);
      const want = ['edge.http.ingress.downstream_rq_total:5|c', 'edge.server.live:1|g', 'edge.http.ingress.downstream_rq_total:2|c', 'edge.server.live:1|g'];
      const deadline = Date.now() + 5000;
      while (received.length < want.length && Date.now() < deadline) await new Promise((r) => setImmediate(r));
      assert.deepEqual(received, want);
    } finally {
      sinks.close();
    }
  });
});
