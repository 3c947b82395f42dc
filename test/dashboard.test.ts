import assert from 'node:assert/strict';
import { request, type IncomingMessage } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { minimalBootstrap } from './helpers/bootstraps.js';
import { httpRequest, startProxy, stopAllProxies, waitFor, type RunningProxy } from './helpers/proxy.js';
import { startUpstream, type Upstream } from './helpers/upstream.js';

/** /dashboard_event_stream (Envoy's Hystrix sink) against a running proxy with traffic. */

const HYSTRIX = 'type.googleapis.com/envoy.config.metrics.v3.HystrixSink';
let upstream: Upstream;
let proxy: RunningProxy;
let plain: RunningProxy;

function bootstrap(sinks: object[]): object {
  const d = minimalBootstrap() as Record<string, any>;
  d.admin.address.socket_address.port_value = 0;
  d.static_resources.listeners[0].address.socket_address.port_value = 0;
  d.static_resources.clusters[0].load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address.port_value = upstream.port;
  d.stats_flush_interval = '0.2s';
  d.stats_sinks = sinks;
  return d;
}

before(async () => {
  upstream = await startUpstream('A');
  proxy = await startProxy(bootstrap([{ name: 'envoy.stat_sinks.hystrix', typed_config: { '@type': HYSTRIX, num_buckets: 10 } }]), ['--concurrency', '2']);
  plain = await startProxy(bootstrap([]), ['--concurrency', '1']);
});

after(async () => {
  await stopAllProxies();
  await upstream.close();
});

/** Opens the stream and collects what arrives until `enough` says so (or fails after 20 s, showing what came). */
function readStream(enough: (text: string) => boolean): Promise<{ res: IncomingMessage; text: string }> {
  return new Promise((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => {
      req.destroy();
      reject(new Error(`the stream never showed what the test waits for; it sent:\n${text.slice(-4000)}`));
    }, 20_000);
    const req = request(`http://${proxy.admin}/dashboard_event_stream`, (res) => {
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        text += d;
        if (enough(text)) {
          clearTimeout(timer);
          req.destroy();
          resolve({ res, text });
        }
      });
    });
    req.on('error', (err) => (err.message === 'socket hang up' ? undefined : reject(err)));
    req.end();
  });
}

const allCounted = (r: Record<string, unknown>) => r.type === 'HystrixCommand' && r.rollingCountSuccess === 20 && r.errorCount === 5;
const records = (text: string) => text.split('\n\n').filter((r) => r.startsWith('data: ')).map((r) => JSON.parse(r.slice(6)) as Record<string, unknown>);

describe('/dashboard_event_stream', () => {
  it('streams Hystrix records per cluster at each flush, with rolling counts of the traffic', async () => {
    const url = `http://127.0.0.1:${proxy.ports.get('ingress')}`;
    let sent = false;
    const { res, text } = await readStream((t) => {
      if (!sent && t.includes(':\n\n')) {
        // The windows exist from the first flush on; now make traffic that the next flushes count.
        sent = true;
        void Promise.all([...Array.from({ length: 20 }, () => httpRequest(`${url}/`)), ...Array.from({ length: 5 }, () => httpRequest(`${url}/status?code=503`))]);
      }
      return records(t).some(allCounted);
    });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'text/event-stream');
    assert.equal(res.headers['cache-control'], 'no-cache');
    assert.equal(res.headers.connection, 'close');
    assert.equal(res.headers['access-control-allow-origin'], '*');
    assert.equal(res.headers['access-control-allow-headers'], 'Accept, Cache-Control, X-Requested-With, Last-Event-ID');
    assert.equal(res.headers['transfer-encoding'], undefined, 'a raw stream until close, not chunked');

    const all = records(text);
    // The record that counts all 25 (earlier flushes may have seen some of the 503s still in flight).
    const command = all.find(allCounted)!;
    assert.deepEqual(Object.keys(command).slice(0, 6), ['type', 'name', 'group', 'currentTime', 'isCircuitBreakerOpen', 'errorPercentage']);
    assert.equal(command.name, 'backend');
    assert.equal(command.requestCount, 25);
    assert.equal(command.errorPercentage, 20);
    assert.equal(command.rollingCountShortCircuited, 0);
    assert.equal(command.propertyValue_circuitBreakerForceClosed, true);
    assert.equal(command.latencyExecute_mean, 'null');
    assert.equal(command.propertyValue_metricsRollingStatisticalWindowInMilliseconds, 200);
    assert.equal(command.propertyValue_executionIsolationSemaphoreMaxConcurrentRequests, 1024);
    assert.equal(command.reportingHosts, 1);
    assert.ok(Math.abs(Number(command.currentTime) - Date.now() / 1000) < 60);
    const pool = all.find((r) => r.type === 'HystrixThreadPool')!;
    assert.equal(pool.name, 'backend');
    assert.equal(pool.propertyValue_queueSizeRejectionThreshold, 1024);
    // Latency keys are quantiles × 100, values with six decimals, in the raw text.
    assert.match(text, /"latencyExecute": \{"0": \d+\.\d{6}, "25": \d+\.\d{6}, .*"99\.5": \d+\.\d{6}, "100": \d+\.\d{6}\}/);
    assert.match(text, /"latencyExecute": \{\}/, 'a flush without requests has no latency figures');
  });

  it('rolls the counts off after num_buckets flushes', async () => {
    // No traffic now: within 10 flushes (2 s) the window no longer holds the requests above.
    const { text } = await readStream((t) => records(t).filter((r) => r.type === 'HystrixCommand').length >= 12);
    const last = records(text).filter((r) => r.type === 'HystrixCommand').pop()!;
    assert.equal(last.requestCount, 0);
  });

  it('does not exist without a Hystrix sink', async () => {
    const r = await httpRequest(`http://${plain.admin}/dashboard_event_stream`);
    assert.equal(r.status, 404);
    await waitFor('help without the stream', async () => !(await httpRequest(`http://${plain.admin}/help`)).body.includes('dashboard_event_stream') || undefined);
  });
});
