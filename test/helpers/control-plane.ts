import { Server, ServerCredentials, type ServerDuplexStream } from '@grpc/grpc-js';
import type { JsonObject } from '../../shared/config/proto-json.js';
import { ADS_METHOD, CDS_METHOD, DELTA_METHODS, LDS_METHOD, SDS_METHOD } from '../../supervisor/xds/grpc-stream.js';
import { envoyCodec } from '../../shared/config/envoy-codec.js';
import { waitFor } from './proxy.js';

/**
 * A small xDS control plane for tests, over @grpc/grpc-js with the Envoy protos the project
 * loads: it serves ADS and the per-type CDS, LDS and SDS services, state of the world and incremental (delta),
 * answers each stream with the current resources of the types it asks for (nothing for a type
 * that has none yet), pushes every change to every open stream (delta: what changed and what was
 * removed), and records every request it gets.
 */

export const CLUSTER_URL = 'type.googleapis.com/envoy.config.cluster.v3.Cluster';
export const LISTENER_URL = 'type.googleapis.com/envoy.config.listener.v3.Listener';
export const ROUTE_URL = 'type.googleapis.com/envoy.config.route.v3.RouteConfiguration';
export const ENDPOINTS_URL = 'type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment';
export const SECRET_URL = 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret';

/** A CDS cluster whose endpoints come by EDS over ADS. */
export const edsCluster = (name: string, extra: JsonObject = {}): JsonObject => ({
  '@type': CLUSTER_URL,
  name,
  type: 'EDS',
  connect_timeout: '1s',
  eds_cluster_config: { eds_config: { ads: {}, resource_api_version: 'V3' } },
  ...extra,
});

type Stream = ServerDuplexStream<JsonObject, JsonObject>;

/** setAll()'s lists, by the type each holds. */
const DOCUMENT_TYPES: Record<string, string> = {
  clusters: CLUSTER_URL,
  endpoints: 'type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment',
  listeners: LISTENER_URL,
  routes: ROUTE_URL,
  secrets: SECRET_URL,
};

export class TestControlPlane {
  /** Every request received, in order, decoded to canonical JSON. */
  readonly requests: JsonObject[] = [];
  /** Called with each request as it comes (scripts/control-plane.ts logs ACKs and NACKs). */
  onRequest: ((rq: JsonObject) => void) | undefined;
  private readonly resources = new Map<string, { version: string; resources: JsonObject[] }>();
  private readonly streams = new Set<{ stream: Stream; types: Set<string>; delta: boolean; sent: Map<string, Set<string>> }>();
  private server: Server | undefined;
  private nonce = 0;
  /** Sent as each state-of-the-world response's control_plane.identifier, when set. */
  identifier: string | undefined;
  port = 0;

  /** Plaintext unless given (ServerCredentials.createSsl for a control plane behind TLS). */
  constructor(private readonly credentials: ServerCredentials = ServerCredentials.createInsecure()) {}

  /** `host`: the address it binds (scripts/control-plane.ts takes --host: 0.0.0.0 in a pod). */
  static async start(port = 0, credentials?: ServerCredentials, host = '127.0.0.1'): Promise<TestControlPlane> {
    const cp = new TestControlPlane(credentials);
    cp.host = host;
    await cp.listen(port);
    return cp;
  }

  private host = '127.0.0.1';

  /** Starts serving (again, after stop(), on the same port). */
  async listen(port = this.port): Promise<void> {
    const codec = envoyCodec;
    const method = (path: string, delta: boolean) => {
      const rq = codec(`envoy.service.discovery.v3.${delta ? 'Delta' : ''}DiscoveryRequest`);
      const rs = codec(`envoy.service.discovery.v3.${delta ? 'Delta' : ''}DiscoveryResponse`);
      return { path, requestStream: true, responseStream: true, requestSerialize: rq.serialize, requestDeserialize: rq.deserialize, responseSerialize: rs.serialize, responseDeserialize: rs.deserialize };
    };
    const server = new Server();
    const sotw = (stream: Stream) => this.serve(stream, false);
    const delta = (stream: Stream) => this.serve(stream, true);
    server.addService(
      { StreamAggregatedResources: method(ADS_METHOD, false), DeltaAggregatedResources: method(DELTA_METHODS[ADS_METHOD]!, true) } as never,
      { StreamAggregatedResources: sotw, DeltaAggregatedResources: delta },
    );
    server.addService({ StreamClusters: method(CDS_METHOD, false), DeltaClusters: method(DELTA_METHODS[CDS_METHOD]!, true) } as never, { StreamClusters: sotw, DeltaClusters: delta });
    server.addService({ StreamListeners: method(LDS_METHOD, false), DeltaListeners: method(DELTA_METHODS[LDS_METHOD]!, true) } as never, { StreamListeners: sotw, DeltaListeners: delta });
    server.addService({ StreamSecrets: method(SDS_METHOD, false), DeltaSecrets: method(DELTA_METHODS[SDS_METHOD]!, true) } as never, { StreamSecrets: sotw, DeltaSecrets: delta });
    this.port = await new Promise<number>((resolve, reject) =>
      server.bindAsync(`${this.host}:${port}`, this.credentials, (err, bound) => (err ? reject(err) : resolve(bound))),
    );
    this.server = server;
  }

  private serve(stream: Stream, delta: boolean): void {
    const entry = { stream, types: new Set<string>(), delta, sent: new Map<string, Set<string>>() };
    this.streams.add(entry);
    stream.on('data', (rq: JsonObject) => {
      this.requests.push(rq);
      this.onRequest?.(rq);
      const type = String(rq.type_url ?? '');
      // A first request for a type (no nonce yet) gets the current resources; ACKs and NACKs get nothing.
      if (!entry.types.has(type)) {
        entry.types.add(type);
        this.push(entry, type);
      }
    });
    stream.on('error', () => undefined);
    stream.on('close', () => this.streams.delete(entry));
    stream.on('end', () => {
      this.streams.delete(entry);
      stream.end();
    });
  }

  private push(entry: { stream: Stream; types: Set<string>; delta: boolean; sent: Map<string, Set<string>> }, type: string): void {
    const current = this.resources.get(type);
    if (!current) return;
    const nonce = String(++this.nonce);
    if (!entry.delta) {
      entry.stream.write({ version_info: current.version, resources: current.resources, type_url: type, nonce, ...(this.identifier ? { control_plane: { identifier: this.identifier } } : {}) });
      return;
    }
    const nameOf = (r: JsonObject) => String(r.name ?? r.cluster_name ?? '');
    const names = new Set(current.resources.map(nameOf));
    const removed = [...(entry.sent.get(type) ?? [])].filter((n) => !names.has(n));
    entry.sent.set(type, names);
    entry.stream.write({
      system_version_info: current.version,
      resources: current.resources.map((r) => ({ name: nameOf(r), version: current.version, resource: r })),
      ...(removed.length ? { removed_resources: removed } : {}),
      type_url: type,
      nonce,
    });
  }

  /**
   * Sets every type from one document of lists by type (`clusters`, `endpoints`, `listeners`,
   * `routes`, `secrets`: resources as Envoy's v3 API has them, `@type` optional), as one version. Returns
   * each type's count.
   */
  setAll(doc: Record<string, JsonObject[] | undefined>, version: string): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const [key, url] of Object.entries(DOCUMENT_TYPES)) {
      const resources = (doc[key] ?? []).map((r) => ({ '@type': url, ...r }));
      this.set(url, version, resources);
      counts[key] = resources.length;
    }
    return counts;
  }

  /** Sets the resources of a type (each canonical JSON with its @type) and pushes them to every stream that asked. */
  set(type: string, version: string, resources: JsonObject[]): void {
    this.resources.set(type, { version, resources });
    for (const entry of this.streams) if (entry.types.has(type)) this.push(entry, type);
  }

  /** The last nonce sent. */
  get lastNonce(): string {
    return String(this.nonce);
  }

  /** Resolves with the first request received after `from` (an index into `requests`) that `match` accepts. */
  waitForRequest(what: string, match: (rq: JsonObject) => boolean, from = 0): Promise<JsonObject> {
    return waitFor(what, () => this.requests.slice(from).find(match));
  }

  get openStreams(): number {
    return this.streams.size;
  }

  /** Stops at once: every stream ends, as when a control plane dies. */
  stop(): void {
    this.server?.forceShutdown();
    this.server = undefined;
    this.streams.clear();
  }
}
