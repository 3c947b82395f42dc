import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import protobuf from 'protobufjs';
import { HCM_TYPE, ROUTER_TYPE, staticCluster } from './helpers/bootstraps.js';
import { runProxy, tempDir } from './helpers/cli.js';
import { httpRequest, startProxy, statValue, stopAllProxies, waitFor, type RunningProxy } from './helpers/proxy.js';
import { closedPort } from './helpers/upstream.js';
import { Server as GrpcServer, ServerCredentials } from '@grpc/grpc-js';
import { otlpType } from '../shared/tracing/otlp.js';

/**
 * Distributed tracing with Zipkin, as Envoy does it, across two chained proxies and the
 * upstream's propagated headers: a Zipkin collector stand-in (HTTP, decoding JSON v2 and proto3)
 * receives the spans; their trace ids, ids, parents, names and tags must join up. Also Envoy's
 * sampling decision in x-request-id, its figures, and a collector that is down.
 */

const ZIPKIN = 'type.googleapis.com/envoy.config.trace.v3.ZipkinConfig';
const tmp = tempDir();

interface ZipkinSpan {
  traceId: string;
  id: string;
  parentId?: string;
  name: string;
  kind: string;
  timestamp: number;
  duration: number;
  localEndpoint: { serviceName: string };
  tags: Record<string, string>;
  shared?: boolean;
}

/** Zipkin stand-in: what it received, decoded (JSON v2 or proto3 ListOfSpans), answering 202 as Zipkin does. */
let collector: Server;
let collectorPort: number;
const received: ZipkinSpan[] = [];
const contentTypes = new Set<string>();

/** The application behind the proxies: answers with the trace headers it got. */
let app: Server;
let appPort: number;
const appSaw: IncomingHttpHeaders[] = [];

function decodeProto(body: Buffer): ZipkinSpan[] {
  const out: ZipkinSpan[] = [];
  const list = protobuf.Reader.create(body);
  while (list.pos < list.len) {
    const tag = list.uint32();
    if (tag >>> 3 !== 1) {
      list.skipType(tag & 7);
      continue;
    }
    const r = protobuf.Reader.create(list.bytes());
    const span: ZipkinSpan = { traceId: '', id: '', name: '', kind: '', timestamp: 0, duration: 0, localEndpoint: { serviceName: '' }, tags: {} };
    while (r.pos < r.len) {
      const t = r.uint32();
      switch (t >>> 3) {
        case 1: span.traceId = Buffer.from(r.bytes()).toString('hex'); break;
        case 2: span.parentId = Buffer.from(r.bytes()).toString('hex'); break;
        case 3: span.id = Buffer.from(r.bytes()).toString('hex'); break;
        case 4: span.kind = r.int32() === 1 ? 'CLIENT' : 'SERVER'; break;
        case 5: span.name = r.string(); break;
        case 6: span.timestamp = Number(r.fixed64()); break;
        case 7: span.duration = Number(r.uint64()); break;
        case 8: {
          const e = protobuf.Reader.create(r.bytes());
          while (e.pos < e.len) {
            const et = e.uint32();
            if (et >>> 3 === 1) span.localEndpoint.serviceName = e.string();
            else e.skipType(et & 7);
          }
          break;
        }
        case 11: {
          const e = protobuf.Reader.create(r.bytes());
          let k = '';
          let v = '';
          while (e.pos < e.len) {
            const et = e.uint32();
            if (et >>> 3 === 1) k = e.string();
            else if (et >>> 3 === 2) v = e.string();
            else e.skipType(et & 7);
          }
          span.tags[k] = v;
          break;
        }
        case 13: span.shared = r.bool(); break;
        default: r.skipType(t & 7);
      }
    }
    out.push(span);
  }
  return out;
}

before(async () => {
  collector = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      contentTypes.add(String(req.headers['content-type']));
      received.push(...(req.headers['content-type'] === 'application/x-protobuf' ? decodeProto(body) : (JSON.parse(body.toString()) as ZipkinSpan[])));
      res.writeHead(202).end();
    });
  });
  app = createServer((req, res) => {
    appSaw.push(req.headers);
    res.end(JSON.stringify(req.headers));
  });
  await Promise.all([new Promise<void>((r) => collector.listen(0, '127.0.0.1', r)), new Promise<void>((r) => app.listen(0, '127.0.0.1', r))]);
  collectorPort = (collector.address() as AddressInfo).port;
  appPort = (app.address() as AddressInfo).port;
});

after(async () => {
  await stopAllProxies();
  collector.close();
  app.close();
  tmp.cleanup();
});

/** A proxy whose listener `name` traces to the collector and routes to `cluster` (at `port`). */
function tracedBootstrap(name: string, cluster: string, port: number, options: { tracing?: object; route?: object; router?: object; version?: string; collector?: number; bootstrapTracing?: boolean; hcm?: object } = {}): object {
  const provider = { name: 'envoy.tracers.zipkin', typed_config: { '@type': ZIPKIN, collector_cluster: 'zipkin', collector_endpoint: '/api/v2/spans', collector_endpoint_version: options.version ?? 'HTTP_JSON' } };
  return {
    node: { id: `${name}-node`, cluster: `${name}-service` },
    admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
    // One span is a batch here, so the collector hears of each request at once.
    layered_runtime: { layers: [{ name: 'static', static_layer: { 'tracing.zipkin.min_flush_spans': 1 } }] },
    ...(options.bootstrapTracing ? { tracing: { http: provider } } : {}),
    static_resources: {
      listeners: [
        {
          name,
          address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
          filter_chains: [
            {
              filters: [
                {
                  name: 'envoy.filters.network.http_connection_manager',
                  typed_config: {
                    '@type': HCM_TYPE,
                    stat_prefix: name,
                    tracing: { ...(options.bootstrapTracing ? {} : { provider }), ...options.tracing },
                    route_config: { virtual_hosts: [{ name: 'all', domains: ['*'], routes: [{ match: { prefix: '/' }, route: { cluster }, ...options.route }] }] },
                    http_filters: [{ name: 'envoy.filters.http.router', typed_config: { '@type': ROUTER_TYPE, ...options.router } }],
                    ...options.hcm,
                  },
                },
              ],
            },
          ],
        },
      ],
      clusters: [staticCluster(cluster, port), staticCluster('zipkin', options.collector ?? collectorPort)],
    },
  };
}

describe('Zipkin tracing across two proxies', () => {
  let inner: RunningProxy;
  let outer: RunningProxy;
  before(async () => {
    inner = await startProxy(tracedBootstrap('inner', 'app', appPort), ['--concurrency', '1']);
    outer = await startProxy(
      tracedBootstrap('outer', 'inner', inner.ports.get('outer') ?? inner.ports.get('inner')!, {
        router: { start_child_span: true },
        route: { decorator: { operation: 'checkout' }, metadata: { filter_metadata: { shop: { team: 'payments' } } } },
        tracing: {
          custom_tags: [
            { tag: 'env', literal: { value: 'test' } },
            { tag: 'tenant', request_header: { name: 'x-tenant', default_value: 'none' } },
            { tag: 'team', metadata: { kind: { route: {} }, metadata_key: { key: 'shop', path: [{ key: 'team' }] } } },
          ],
        },
      }),
      ['--concurrency', '1'],
    );
  });

  it('reports spans whose ids, parents and names join up, and the app sees the inner span as its parent', async () => {
    received.length = 0;
    const r = await httpRequest(`http://127.0.0.1:${outer.ports.get('outer')}/cart?id=7`, { headers: { 'x-tenant': 'acme' } });
    assert.equal(r.status, 200);
    const seen = appSaw.at(-1)!;
    await waitFor('three spans at the collector', () => (received.length >= 3 ? true : undefined));
    const root = received.find((s) => s.localEndpoint.serviceName === 'outer-service' && s.kind === 'SERVER')!;
    const child = received.find((s) => s.localEndpoint.serviceName === 'outer-service' && s.kind === 'CLIENT')!;
    const server = received.find((s) => s.localEndpoint.serviceName === 'inner-service')!;
    assert.ok(root && child && server, JSON.stringify(received));
    // One trace; the root's id is the trace id; the router's child span is the root's; the inner proxy shares the child's id.
    assert.equal(new Set([root.traceId, child.traceId, server.traceId, seen['x-b3-traceid']]).size, 1);
    assert.equal(root.id, root.traceId.slice(-16));
    assert.equal(root.parentId, undefined);
    assert.equal(child.parentId, root.id);
    assert.equal(child.name, 'router inner egress');
    assert.equal(server.id, child.id, 'the inner SERVER span shares the calling span id');
    assert.equal(server.shared, true);
    assert.equal(server.parentId, root.id);
    assert.equal(seen['x-b3-spanid'], server.id, 'the app is called from the inner span');
    assert.equal(seen['x-b3-sampled'], '1');
    // Names: the decorator, else (Zipkin) the request's host (the client's, passed on unchanged).
    assert.equal(root.name, 'checkout');
    assert.equal(server.name, `127.0.0.1:${outer.ports.get('outer')}`);
    // Envoy's tags, and the custom ones.
    assert.equal(root.tags['http.method'], 'GET');
    assert.equal(root.tags['http.url'], `http://127.0.0.1:${outer.ports.get('outer')}/cart?id=7`);
    assert.equal(root.tags['http.status_code'], '200');
    assert.equal(root.tags['upstream_cluster'], 'inner');
    assert.equal(root.tags['component'], 'proxy');
    assert.equal(root.tags['node_id'], 'outer-node');
    assert.equal(root.tags['response_flags'], '-');
    assert.equal(root.tags['guid:x-request-id'], seen['x-request-id']);
    assert.deepEqual([root.tags.env, root.tags.tenant, root.tags.team], ['test', 'acme', 'payments']);
    assert.equal(child.tags['upstream_address'], `127.0.0.1:${inner.ports.get('inner')}`);
    assert.ok(root.duration > 0 && root.timestamp > 1.6e15, 'microseconds since the epoch');
    // The sampling decision travels in x-request-id's version character ('9': sampled).
    assert.equal(String(seen['x-request-id'])[14], '9');
    assert.equal(await statValue(outer, 'http.outer.tracing.random_sampling'), 1);
    await waitFor('the reports counted', async () => ((await statValue(outer, 'tracing.zipkin.reports_sent')) >= 1 ? true : undefined));
  });
});

describe('the sampling decision', () => {
  it('does not report a request random_sampling leaves out, and tells the upstream (x-b3-sampled: 0); x-envoy-force-trace forces it (from an internal client)', async () => {
    // The client on 127.0.0.1 is internal (use_remote_address, internal_address_config): only such a client may force a trace.
    const internal = { use_remote_address: true, internal_address_config: { cidr_ranges: [{ address_prefix: '127.0.0.0', prefix_len: 8 }] } };
    const proxy = await startProxy(tracedBootstrap('sampled', 'app', appPort, { tracing: { random_sampling: { value: 0 } }, hcm: internal }), ['--concurrency', '1']);
    received.length = 0;
    await httpRequest(`http://127.0.0.1:${proxy.ports.get('sampled')}/quiet`);
    assert.equal(appSaw.at(-1)!['x-b3-sampled'], '0');
    assert.equal(String(appSaw.at(-1)!['x-request-id'])[14], '4');
    assert.equal(await statValue(proxy, 'http.sampled.tracing.not_traceable'), 1);
    await httpRequest(`http://127.0.0.1:${proxy.ports.get('sampled')}/forced`, { headers: { 'x-envoy-force-trace': '1' } });
    assert.equal(String(appSaw.at(-1)!['x-request-id'])[14], 'a');
    assert.equal(await statValue(proxy, 'http.sampled.tracing.service_forced'), 1);
    await waitFor('the forced span', () => (received.some((s) => s.tags['http.url']?.endsWith('/forced')) ? true : undefined));
    assert.equal(received.some((s) => s.tags['http.url']?.endsWith('/quiet')), false, 'the unsampled request was not reported');
  });
});

describe('the collector', () => {
  it('gets proto3 with HTTP_PROTO, and the bootstrap tracer serves a connection manager that names none', async () => {
    const proxy = await startProxy(tracedBootstrap('proto', 'app', appPort, { version: 'HTTP_PROTO', bootstrapTracing: true }), ['--concurrency', '1']);
    received.length = 0;
    await httpRequest(`http://127.0.0.1:${proxy.ports.get('proto')}/proto`);
    await waitFor('the proto span', () => received.find((s) => s.tags['http.url']?.endsWith('/proto')));
    assert.ok(contentTypes.has('application/x-protobuf'));
    const span = received.find((s) => s.tags['http.url']?.endsWith('/proto'))!;
    assert.equal(span.localEndpoint.serviceName, 'proto-service');
    assert.equal(span.kind, 'SERVER');
  });

  it('that is down never holds a request: the failure is counted', async () => {
    const proxy = await startProxy(tracedBootstrap('down', 'app', appPort, { collector: await closedPort() }), ['--concurrency', '1']);
    for (let i = 0; i < 3; i++) assert.equal((await httpRequest(`http://127.0.0.1:${proxy.ports.get('down')}/x`)).status, 200);
    await waitFor('the failed reports counted', async () => ((await statValue(proxy, 'tracing.zipkin.reports_failed')) >= 1 ? true : undefined));
  });

  it("is refused by Envoy's rules: an unknown cluster, an unusable endpoint version, another tracer", async () => {
    const refused = async (config: object, message: RegExp) => {
      const r = await runProxy(['--mode', 'validate', '-c', tmp.file(`t${Math.random()}.json`, JSON.stringify(config))]);
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, message);
    };
    const base = tracedBootstrap('v', 'app', 1) as { static_resources: { clusters: { name: string }[]; listeners: { filter_chains: { filters: { typed_config: { tracing: { provider: { typed_config: Record<string, unknown> } } } }[] }[] }[] } };
    const provider = () => base.static_resources.listeners[0]!.filter_chains[0]!.filters[0]!.typed_config.tracing.provider;
    provider().typed_config.collector_cluster = 'nowhere';
    await refused(base, /tracing\.provider\.typed_config\.collector_cluster: envoy\.tracers\.zipkin: unknown cluster 'nowhere'/);
    provider().typed_config.collector_cluster = 'zipkin';
    delete provider().typed_config.collector_endpoint_version;
    await refused(base, /collector_endpoint_version: set HTTP_JSON or HTTP_PROTO/);
    provider().typed_config = { '@type': 'type.googleapis.com/envoy.config.trace.v3.DatadogConfig', collector_cluster: 'zipkin', service_name: 'x' };
    await refused(base, /tracing\.provider: tracer 'envoy\.tracers\.zipkin' \(envoy\.config\.trace\.v3\.DatadogConfig\) is not supported \(envoy\.tracers\.opentelemetry and envoy\.tracers\.zipkin are\)/);
    provider().typed_config = { '@type': 'type.googleapis.com/envoy.config.trace.v3.OpenTelemetryConfig' };
    await refused(base, /the OpenTelemetry tracer exports over one of grpc_service and http_service/);
  });
});

/** An OTLP span as the receivers decode it (ids as hex, attributes as a record). */
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  traceState?: string;
  name: string;
  kind: number;
  attributes: Record<string, string>;
  status?: { code?: number };
  resource: Record<string, string>;
  via: 'grpc' | 'http';
}

function otlpSpans(body: Buffer, via: 'grpc' | 'http'): OtlpSpan[] {
  const request = otlpType('ExportTraceServiceRequest').toObject(otlpType('ExportTraceServiceRequest').decode(body), { bytes: String, defaults: false }) as {
    resourceSpans: { resource: { attributes: { key: string; value: { stringValue: string } }[] }; scopeSpans: { spans: Record<string, unknown>[] }[] }[];
  };
  const hex = (b64: unknown) => (typeof b64 === 'string' ? Buffer.from(b64, 'base64').toString('hex') : undefined);
  const out: OtlpSpan[] = [];
  for (const rs of request.resourceSpans) {
    const resource = Object.fromEntries(rs.resource.attributes.map((a) => [a.key, a.value.stringValue]));
    for (const ss of rs.scopeSpans) {
      for (const sp of ss.spans) {
        out.push({
          traceId: hex(sp.traceId)!,
          spanId: hex(sp.spanId)!,
          ...(sp.parentSpanId ? { parentSpanId: hex(sp.parentSpanId)! } : {}),
          ...(sp.traceState ? { traceState: String(sp.traceState) } : {}),
          name: String(sp.name),
          kind: Number(sp.kind),
          attributes: Object.fromEntries((sp.attributes as { key: string; value: { stringValue: string } }[]).map((a) => [a.key, a.value.stringValue])),
          status: sp.status as { code?: number },
          resource,
          via,
        });
      }
    }
  }
  return out;
}

describe('OpenTelemetry tracing across two proxies', () => {
  const otlp: OtlpSpan[] = [];
  let grpcReceiver: GrpcServer;
  let grpcPort: number;
  let httpReceiver: Server;
  let httpPort: number;
  const httpPaths = new Set<string>();

  before(async () => {
    grpcReceiver = new GrpcServer();
    grpcReceiver.addService(
      {
        Export: {
          path: '/opentelemetry.proto.collector.trace.v1.TraceService/Export',
          requestStream: false,
          responseStream: false,
          requestSerialize: (b: Buffer) => b,
          requestDeserialize: (b: Buffer) => b,
          responseSerialize: (b: Buffer) => b,
          responseDeserialize: (b: Buffer) => b,
        },
      },
      {
        Export: (call: { request: Buffer }, callback: (err: null, reply: Buffer) => void) => {
          otlp.push(...otlpSpans(call.request, 'grpc'));
          callback(null, Buffer.from(otlpType('ExportTraceServiceResponse').encode({}).finish()));
        },
      } as never,
    );
    grpcPort = await new Promise<number>((resolve, reject) => grpcReceiver.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, port) => (err ? reject(err) : resolve(port))));
    httpReceiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        httpPaths.add(`${req.url} ${req.headers['content-type']} ${req.headers['x-api-key']}`);
        otlp.push(...otlpSpans(Buffer.concat(chunks), 'http'));
        res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
      });
    });
    await new Promise<void>((r) => httpReceiver.listen(0, '127.0.0.1', r));
    httpPort = (httpReceiver.address() as AddressInfo).port;
  });

  after(() => {
    grpcReceiver.forceShutdown();
    httpReceiver.close();
  });

  /** A proxy tracing with OpenTelemetry to the gRPC or the HTTP receiver. */
  function otelBootstrap(name: string, cluster: string, port: number, via: 'grpc' | 'http', router: object = {}): object {
    const exporter =
      via === 'grpc'
        ? { grpc_service: { envoy_grpc: { cluster_name: 'otlp' }, timeout: '2s' } }
        : { http_service: { http_uri: { uri: 'http://collector.internal/v1/traces', cluster: 'otlp', timeout: '2s' }, request_headers_to_add: [{ header: { key: 'x-api-key', value: 'k1' } }] } };
    const provider = {
      name: 'envoy.tracers.opentelemetry',
      typed_config: {
        '@type': 'type.googleapis.com/envoy.config.trace.v3.OpenTelemetryConfig',
        service_name: `${name}-svc`,
        ...exporter,
        resource_detectors: [{ name: 'envoy.tracers.opentelemetry.resource_detectors.static_config', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.tracers.opentelemetry.resource_detectors.v3.StaticConfigResourceDetectorConfig', attributes: { 'deployment.environment': 'test' } } }],
      },
    };
    const otlpCluster = { ...staticCluster('otlp', via === 'grpc' ? grpcPort : httpPort), ...(via === 'grpc' ? { typed_extension_protocol_options: { 'envoy.extensions.upstreams.http.v3.HttpProtocolOptions': { '@type': 'type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions', explicit_http_config: { http2_protocol_options: {} } } } } : {}) };
    return {
      admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
      layered_runtime: { layers: [{ name: 'static', static_layer: { 'tracing.opentelemetry.min_flush_spans': 1 } }] },
      static_resources: {
        listeners: [
          {
            name,
            address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
            filter_chains: [{ filters: [{ name: 'envoy.filters.network.http_connection_manager', typed_config: { '@type': HCM_TYPE, stat_prefix: name, tracing: { provider }, route_config: { virtual_hosts: [{ name: 'all', domains: ['*'], routes: [{ match: { prefix: '/' }, route: { cluster } }] }] }, http_filters: [{ name: 'envoy.filters.http.router', typed_config: { '@type': ROUTER_TYPE, ...router } }] } }] }],
          },
        ],
        clusters: [staticCluster(cluster, port), otlpCluster],
      },
    };
  }

  it('continues the W3C trace the client started: OTLP over gRPC and HTTP, ids and parents joined up, tracestate kept', async () => {
    const inner = await startProxy(otelBootstrap('oinner', 'app', appPort, 'http'), ['--concurrency', '1']);
    const outer = await startProxy(otelBootstrap('oouter', 'oinner', inner.ports.get('oinner')!, 'grpc', { start_child_span: true }), ['--concurrency', '1']);
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const clientSpan = '00f067aa0ba902b7';
    const r = await httpRequest(`http://127.0.0.1:${outer.ports.get('oouter')}/otel`, { headers: { traceparent: `00-${traceId}-${clientSpan}-01`, tracestate: 'vendor=x' } });
    assert.equal(r.status, 200);
    const seen = appSaw.at(-1)!;
    await waitFor('three OTLP spans', () => (otlp.filter((s) => s.traceId === traceId).length >= 3 ? true : undefined));
    const spans = otlp.filter((s) => s.traceId === traceId);
    const outerServer = spans.find((s) => s.resource['service.name'] === 'oouter-svc' && s.kind === 2)!;
    const outerChild = spans.find((s) => s.resource['service.name'] === 'oouter-svc' && s.kind === 3)!;
    const innerServer = spans.find((s) => s.resource['service.name'] === 'oinner-svc')!;
    assert.ok(outerServer && outerChild && innerServer, JSON.stringify(spans));
    assert.equal(outerServer.parentSpanId, clientSpan, "the client's span is the parent");
    assert.equal(outerChild.parentSpanId, outerServer.spanId);
    assert.equal(innerServer.parentSpanId, outerChild.spanId);
    assert.equal(seen.traceparent, `00-${traceId}-${innerServer.spanId}-01`, 'the app is called from the inner span');
    assert.equal(seen.tracestate, 'vendor=x');
    assert.deepEqual([outerServer.name, outerChild.name, innerServer.name], ['ingress', 'router oinner egress', 'ingress']);
    assert.deepEqual([outerServer.via, innerServer.via], ['grpc', 'http']);
    assert.equal(outerServer.traceState, 'vendor=x');
    assert.equal(outerServer.resource['deployment.environment'], 'test');
    assert.equal(outerServer.attributes['http.status_code'], '200');
    assert.equal(outerServer.attributes['http.method'], 'GET');
    assert.ok(httpPaths.has('/v1/traces application/x-protobuf k1'), [...httpPaths].join(', '));
    await waitFor('spans_sent counted', async () => ((await statValue(outer, 'tracing.opentelemetry.spans_sent')) >= 2 ? true : undefined));
  });

  it('neither reports nor propagates a request whose traceparent is invalid, as Envoy', async () => {
    const proxy = await startProxy(otelBootstrap('obad', 'app', appPort, 'http'), ['--concurrency', '1']);
    const before = otlp.length;
    await httpRequest(`http://127.0.0.1:${proxy.ports.get('obad')}/bad`, { headers: { traceparent: 'not-a-trace' } });
    assert.equal(appSaw.at(-1)!.traceparent, 'not-a-trace', 'passed on as it came, nothing injected');
    await httpRequest(`http://127.0.0.1:${proxy.ports.get('obad')}/good`);
    await waitFor('the good request reported', () => (otlp.slice(before).some((s) => s.attributes['http.url']?.endsWith('/good')) ? true : undefined));
    assert.equal(otlp.slice(before).some((s) => s.attributes['http.url']?.endsWith('/bad')), false);
  });
});
