import { Client, credentials, Metadata, type ClientDuplexStream } from '@grpc/grpc-js';
import { fromProto3JSON } from 'proto3-json-serializer';
import type protobuf from 'protobufjs';
import type { JsonObject } from '../../shared/config/proto-json.js';
import { BinaryDecoder } from '../../shared/config/proto-binary.js';
import { envoySchema } from '../../shared/config/schema.js';
import { getLogger } from '../../shared/log/logger.js';
import { stats } from '../../shared/stats/process.js';

/**
 * One xDS stream to a control plane over gRPC, state of the world (api_type GRPC): an aggregated
 * stream (ADS) carrying several resource types, or one per-type service. As Envoy's gRPC mux:
 *
 * - every subscription asks for its type (CDS and LDS are wildcards: no resource names);
 * - each response is applied, then ACKed with its version_info and nonce, or NACKed with the last
 *   accepted version, the nonce and `error_detail` (code 13, INTERNAL) naming what was refused;
 * - the node goes on every request, or only on the first of a stream with
 *   `set_node_on_first_message_only`;
 * - a stream that ends or fails is opened again after Envoy's backoff (500 ms doubling to 30 s,
 *   with jitter), asking again with the versions last accepted; the configuration already
 *   applied stays meanwhile, however long the control plane is gone.
 */

const log = getLogger('config', import.meta.url);
const BASE_BACKOFF_MS = 500;
const MAX_BACKOFF_MS = 30_000;
const INTERNAL = 13;

export const ADS_METHOD = '/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources';
export const CDS_METHOD = '/envoy.service.cluster.v3.ClusterDiscoveryService/StreamClusters';
export const EDS_METHOD = '/envoy.service.endpoint.v3.EndpointDiscoveryService/StreamEndpoints';
export const RDS_METHOD = '/envoy.service.route.v3.RouteDiscoveryService/StreamRoutes';

/** Applies a response's resources; returns the errors of those refused (none: ACK). */
export type ApplyResponse = (versionInfo: string, resources: JsonObject[]) => string[];

interface Subscription {
  typeUrl: string;
  /** The resources asked for by name (EDS, RDS); none: every resource of the type (CDS, LDS). */
  names: string[];
  apply: ApplyResponse;
  /** The version last accepted (sent again on a new stream), and the last nonce seen on this stream. */
  version: string;
  nonce: string;
  onFirst: (() => void) | undefined;
}

let types: { request: protobuf.Type; response: protobuf.Type } | undefined;
function messageTypes() {
  const root = envoySchema();
  return (types ??= {
    request: root.lookupType('envoy.service.discovery.v3.DiscoveryRequest'),
    response: root.lookupType('envoy.service.discovery.v3.DiscoveryResponse'),
  });
}

export class GrpcXdsStream {
  private readonly subscriptions = new Map<string, Subscription>();
  private client: Client | undefined;
  private stream: ClientDuplexStream<JsonObject, JsonObject> | undefined;
  private sentNode = false;
  private backoffMs = BASE_BACKOFF_MS;
  private retryTimer: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly connected = stats.gauge('control_plane.connected_state', 'local');

  constructor(
    /** `ip:port` of the xDS cluster's host. */
    private readonly target: string,
    private readonly method: string,
    private readonly node: JsonObject,
    private readonly setNodeOnFirstMessageOnly: boolean,
  ) {}

  /**
   * Asks for the resources of `typeUrl` named `names` (none: every one, a wildcard). `first` runs
   * at the first response, for the initial fetch; the stream starts with the first subscription.
   */
  subscribe(typeUrl: string, apply: ApplyResponse, first?: () => void, names: string[] = []): void {
    const sub: Subscription = { typeUrl, names, apply, version: '', nonce: '', onFirst: first };
    this.subscriptions.set(typeUrl, sub);
    if (this.stream) this.request(sub);
    else this.open();
  }

  /** Asks for another set of names of a type subscribed to (the clusters that need endpoints changed). */
  rename(typeUrl: string, names: string[]): void {
    const sub = this.subscriptions.get(typeUrl);
    if (!sub || (sub.names.length === names.length && sub.names.every((n, i) => n === names[i]))) return;
    sub.names = names;
    this.request(sub);
  }

  has(typeUrl: string): boolean {
    return this.subscriptions.has(typeUrl);
  }

  private open(): void {
    if (this.closed || this.stream) return;
    this.client ??= new Client(this.target, credentials.createInsecure());
    const { request, response } = messageTypes();
    const decoder = () => new BinaryDecoder(envoySchema());
    const stream = this.client.makeBidiStreamRequest<JsonObject, JsonObject>(
      this.method,
      (m) => Buffer.from(request.encode(fromProto3JSON(request, m as never) as protobuf.Message).finish()),
      (bytes) => {
        const decoded = decoder().decode(response, bytes);
        if (decoded.errors.length) throw new Error(`undecodable DiscoveryResponse: ${decoded.errors.join('; ')}`);
        return decoded.json;
      },
      new Metadata(),
    );
    this.stream = stream;
    this.sentNode = false;
    // Nonces belong to a stream: a new one starts without, asking with the versions last accepted.
    for (const sub of this.subscriptions.values()) sub.nonce = '';
    stream.on('metadata', () => this.connected.set(1));
    stream.on('data', (m: JsonObject) => this.onResponse(m));
    stream.on('error', (err: Error) => log.warn(`xDS stream to ${this.target} failed: ${err.message}`));
    // Every call ends with its status, whether the server ended it or the connection failed.
    stream.on('status', () => this.lost(stream));
    for (const sub of this.subscriptions.values()) this.request(sub);
  }

  private request(sub: Subscription, errorDetail?: string): void {
    const withNode = !this.setNodeOnFirstMessageOnly || !this.sentNode;
    this.sentNode = true;
    this.stream?.write({
      version_info: sub.version,
      ...(withNode ? { node: this.node } : {}),
      ...(sub.names.length ? { resource_names: sub.names } : {}),
      type_url: sub.typeUrl,
      response_nonce: sub.nonce,
      ...(errorDetail !== undefined ? { error_detail: { code: INTERNAL, message: errorDetail } } : {}),
    });
  }

  private onResponse(m: JsonObject): void {
    this.connected.set(1);
    this.backoffMs = BASE_BACKOFF_MS;
    const typeUrl = String(m.type_url ?? '');
    const sub = this.subscriptions.get(typeUrl);
    if (!sub) {
      log.warn(`xDS: a response of type ${typeUrl}, which nothing here asked for, ignored`);
      return;
    }
    sub.nonce = String(m.nonce ?? '');
    const version = String(m.version_info ?? '');
    const errors = sub.apply(version, Array.isArray(m.resources) ? (m.resources as JsonObject[]) : []);
    if (errors.length) {
      log.warn(`xDS: rejected ${typeUrl} version '${version}': ${errors.join('; ')}`);
      this.request(sub, errors.join('; '));
    } else {
      sub.version = version;
      this.request(sub);
    }
    const first = sub.onFirst;
    sub.onFirst = undefined;
    first?.();
  }

  /** The stream ended: open a new one after the backoff; what was applied stays. */
  private lost(stream: ClientDuplexStream<JsonObject, JsonObject>): void {
    if (this.stream !== stream) return;
    this.stream = undefined;
    this.connected.set(0);
    if (this.closed) return;
    const delay = Math.random() * this.backoffMs;
    this.backoffMs = Math.min(MAX_BACKOFF_MS, this.backoffMs * 2);
    this.retryTimer = setTimeout(() => this.open(), delay);
    this.retryTimer.unref();
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.retryTimer);
    this.stream?.cancel();
    this.client?.close();
  }
}
