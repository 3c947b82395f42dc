import type { ChannelCredentials, Client, ClientDuplexStream } from '@grpc/grpc-js';
import { fromProto3JSON } from 'proto3-json-serializer';
import type protobuf from 'protobufjs';
import { list, obj } from '../../shared/config/access.js';
import type { JsonObject } from '../../shared/config/proto-json.js';
import { BinaryDecoder, type DecodeResult } from '../../shared/config/proto-binary.js';
import { noteBinaryFindings, type BinaryFindings } from '../../shared/config/xds-resource.js';
import { envoySchema } from '../../shared/config/schema.js';
import { getLogger } from '../../shared/log/logger.js';
import { stats } from '../../shared/stats/process.js';
import { loadGrpcJs, type GrpcJs } from '../../shared/extensions/transport-sockets/tls/grpc-credentials.js';
import { working } from '../../shared/idle-housekeeping.js';
import { ResponseRefused } from './response-refused.js';
import { ConfigError, errorText } from '../../shared/config/config-error.js';

/**
 * One xDS stream to a control plane over gRPC, state of the world (api_type GRPC): an aggregated
 * stream (ADS) carrying several resource types, or one per-type service. As Envoy's gRPC mux:
 *
 * - every subscription asks for its type (CDS and LDS are wildcards: no resource names);
 * - each response is applied, then ACKed with its version_info and nonce, or NACKed with the last
 *   accepted version, the nonce and `error_detail` (code 13, INTERNAL) naming what was refused:
 *   a response refused as a whole (ResponseRefused) changes nothing, one whose resources are
 *   refused one by one applies the others;
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
/** As Envoy's: an error_detail message is cut at 4,096 characters (gRPC's trailers are small). */
const ERROR_DETAIL_MAX = 4096;

/** The NACK's error_detail: INTERNAL, with the reasons cut as Envoy cuts them. */
export function nackDetail(message: string): JsonObject {
  return { code: INTERNAL, message: message.length > ERROR_DETAIL_MAX ? `${message.slice(0, ERROR_DETAIL_MAX)}...(truncated)` : message };
}

export const ADS_METHOD = '/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources';
export const CDS_METHOD = '/envoy.service.cluster.v3.ClusterDiscoveryService/StreamClusters';
export const EDS_METHOD = '/envoy.service.endpoint.v3.EndpointDiscoveryService/StreamEndpoints';
export const RDS_METHOD = '/envoy.service.route.v3.RouteDiscoveryService/StreamRoutes';
export const LDS_METHOD = '/envoy.service.listener.v3.ListenerDiscoveryService/StreamListeners';
export const SDS_METHOD = '/envoy.service.secret.v3.SecretDiscoveryService/StreamSecrets';

/** The incremental (delta) method of each state-of-the-world one. */
export const DELTA_METHODS: Record<string, string> = {
  [ADS_METHOD]: '/envoy.service.discovery.v3.AggregatedDiscoveryService/DeltaAggregatedResources',
  [CDS_METHOD]: '/envoy.service.cluster.v3.ClusterDiscoveryService/DeltaClusters',
  [EDS_METHOD]: '/envoy.service.endpoint.v3.EndpointDiscoveryService/DeltaEndpoints',
  [RDS_METHOD]: '/envoy.service.route.v3.RouteDiscoveryService/DeltaRoutes',
  [LDS_METHOD]: '/envoy.service.listener.v3.ListenerDiscoveryService/DeltaListeners',
  [SDS_METHOD]: '/envoy.service.secret.v3.SecretDiscoveryService/DeltaSecrets',
};

/** Applies a response's resources; returns the errors of those refused (none: ACK), now or once applied. */
export type ApplyResponse = (versionInfo: string, resources: JsonObject[]) => string[] | Promise<string[]>;

interface Subscription {
  typeUrl: string;
  /** The resources asked for by name (EDS, RDS); none: every resource of the type (CDS, LDS). */
  names: string[];
  apply: ApplyResponse;
  /** The version last accepted (sent again on a new stream), and the last nonce seen on this stream. */
  version: string;
  nonce: string;
  onFirst: (() => void) | undefined;
  /** Delta: the resources held, by name, with their versions (sent as initial_resource_versions on a new stream). */
  held: Map<string, { version: string; resource: JsonObject }>;
  /** Delta: names asked for on this stream already (later requests subscribe only the new ones). */
  subscribed: Set<string>;
  /** After an accepted response: what to wait for before the ACK goes (none: ACK at once). */
  holdAck: (() => Promise<void> | undefined) | undefined;
  /** While the type is paused (its ACK held), the request it will send when the wait ends. */
  paused: Promise<void> | undefined;
  deferred: { errorDetail: string | undefined } | undefined;
}

const typesOf = new Map<boolean, { request: protobuf.Type; response: protobuf.Type }>();
function messageTypes(delta: boolean) {
  const root = envoySchema();
  const prefix = delta ? 'Delta' : '';
  if (!typesOf.has(delta)) {
    typesOf.set(delta, {
      request: root.lookupType(`envoy.service.discovery.v3.${prefix}DiscoveryRequest`),
      response: root.lookupType(`envoy.service.discovery.v3.${prefix}DiscoveryResponse`),
    });
  }
  return typesOf.get(delta)!;
}

/**
 * A decoded DiscoveryResponse (or delta one), with what the decoder found inside each resource
 * noted on it (noteBinaryFindings: malformed bytes refuse the response with a NACK, unknown
 * fields are counted or refused, as Envoy's decoder treats them when it converts the Any). What
 * is wrong outside the resources fails the message, and the stream, as protobuf's parse does in
 * Envoy.
 */
export function resourcesNoted(decoded: DecodeResult, delta: boolean): JsonObject {
  const findings = new Map<number, BinaryFindings>();
  const prefix = delta ? /^resources\[(\d+)\]\.resource(?:\.|$)/ : /^resources\[(\d+)\](?:\.|$)/;
  const sortOut = (path: string): { index: number; rest: string } | undefined => {
    const m = prefix.exec(path);
    return m ? { index: Number(m[1]), rest: path.slice(m[0].length) } : undefined;
  };
  const forResource = (index: number) => findings.get(index) ?? findings.set(index, { errors: [], unknownFields: [] }).get(index)!;
  const outside: ConfigError[] = [];
  for (const e of decoded.errors) {
    const at = sortOut(e.path);
    if (at) forResource(at.index).errors.push(new ConfigError(e.code, at.rest || '<root>', e.detail));
    else outside.push(e);
  }
  if (outside.length) throw new Error(`undecodable DiscoveryResponse: ${errorText(outside)}`);
  for (const u of decoded.unknownFields) {
    const at = sortOut(u.path);
    if (at) forResource(at.index).unknownFields.push({ ...u, path: at.rest });
  }
  const resources = list(decoded.json.resources);
  for (const [index, found] of findings) {
    const r = resources[index];
    if (r) noteBinaryFindings(delta ? obj(r.resource) : r, found);
  }
  return decoded.json;
}

/**
 * grpc-js once loaded, when the first stream opens: a supervisor with no gRPC config source never
 * loads it (~20 ms of every start).
 */
let grpcJs: GrpcJs | undefined;

export class GrpcXdsStream {
  private readonly subscriptions = new Map<string, Subscription>();
  private client: Client | undefined;
  private stream: ClientDuplexStream<JsonObject, JsonObject> | undefined;
  private sentNode = false;
  private backoffMs = BASE_BACKOFF_MS;
  private retryTimer: NodeJS.Timeout | undefined;
  private closed = false;
  /** `<scope>control_plane.*`: connected, requests held back by rate_limit_settings, the control plane's identifier (from the last response that gave one). */
  private readonly connected;
  private readonly rateLimitEnforced;
  private readonly pendingGauge;
  private readonly identifier;
  /** Requests held back by rate_limit_settings, in order. */
  private readonly pending: JsonObject[] = [];
  private tokens: number;
  private tokensAt = Date.now();
  private drainTimer: NodeJS.Timeout | undefined;
  private applying: Promise<void> = Promise.resolve();

  constructor(
    /** `ip:port` of the xDS cluster's host. */
    private readonly target: string,
    /** Plaintext, or the xDS cluster's TLS transport socket (see grpcCredentials), once grpc-js is loaded. */
    private readonly credentials: (grpc: GrpcJs) => ChannelCredentials,
    private readonly method: string,
    private readonly node: JsonObject,
    private readonly setNodeOnFirstMessageOnly: boolean,
    /** api_type DELTA_GRPC: incremental xDS. Subscribers still get the whole set they hold at each update. */
    private readonly delta = false,
    /** rate_limit_settings: a token bucket on requests (Envoy's defaults: 100 tokens, 10 per second), or none. */
    private readonly rateLimit?: { maxTokens: number; fillRate: number },
    /**
     * Where its `control_plane.*` figures go, as Envoy scopes a gRPC mux's: the root for the
     * aggregated stream, the subscription's scope for a per-type one (`cluster_manager.cds.`).
     */
    scope = '',
  ) {
    this.tokens = rateLimit?.maxTokens ?? 0;
    this.connected = stats.gauge(`${scope}control_plane.connected_state`, 'local');
    this.rateLimitEnforced = stats.counter(`${scope}control_plane.rate_limit_enforced`);
    this.pendingGauge = stats.gauge(`${scope}control_plane.pending_requests`, 'local');
    this.identifier = stats.textReadout(`${scope}control_plane.identifier`);
  }

  /**
   * Writes a request, or, past rate_limit_settings, holds it (in order) until a token comes, as
   * Envoy does (`control_plane.rate_limit_enforced`, `control_plane.pending_requests`).
   */
  private send(request: JsonObject): void {
    if (!this.rateLimit) {
      this.stream?.write(request);
      return;
    }
    this.pending.push(request);
    this.drain();
  }

  private drain(): void {
    const limit = this.rateLimit!;
    const now = Date.now();
    this.tokens = Math.min(limit.maxTokens, this.tokens + ((now - this.tokensAt) / 1000) * limit.fillRate);
    this.tokensAt = now;
    while (this.pending.length && this.tokens >= 1) {
      this.tokens--;
      this.stream?.write(this.pending.shift()!);
    }
    this.pendingGauge.set(this.pending.length);
    if (this.pending.length && !this.drainTimer) {
      this.rateLimitEnforced.inc();
      this.drainTimer = setTimeout(() => {
        this.drainTimer = undefined;
        this.drain();
      }, Math.ceil(((1 - this.tokens) / limit.fillRate) * 1000));
      this.drainTimer.unref();
    }
  }

  /**
   * Asks for the resources of `typeUrl` named `names` (none: every one, a wildcard). `first` runs
   * at the first response, for the initial fetch; the stream starts with the first subscription.
   */
  subscribe(typeUrl: string, apply: ApplyResponse, first?: () => void, names: string[] = [], holdAck?: () => Promise<void> | undefined): void {
    const sub: Subscription = { typeUrl, names, apply, version: '', nonce: '', onFirst: first, held: new Map(), subscribed: new Set(), holdAck, paused: undefined, deferred: undefined };
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
    const grpc = grpcJs;
    if (!grpc) {
      // Subscriptions made meanwhile are asked for when the stream opens.
      loadGrpcJs().then(
        (m) => {
          grpcJs = m;
          this.open();
        },
        (err: Error) => log.error(`xDS: loading grpc-js failed: ${err.message}`),
      );
      return;
    }
    this.client ??= new grpc.Client(this.target, this.credentials(grpc));
    const { request, response } = messageTypes(this.delta);
    const decoder = () => new BinaryDecoder(envoySchema());
    const stream = this.client.makeBidiStreamRequest<JsonObject, JsonObject>(
      this.delta ? DELTA_METHODS[this.method]! : this.method,
      (m) => Buffer.from(request.encode(fromProto3JSON(request, m as never) as protobuf.Message).finish()),
      (bytes) => {
        // An update after an idle spell: the optimising compiler is on again before it is read.
        working();
        return resourcesNoted(decoder().decode(response, bytes), this.delta);
      },
      new grpc.Metadata(),
    );
    this.stream = stream;
    this.sentNode = false;
    // Nonces belong to a stream: a new one starts without, asking with the versions last accepted.
    for (const sub of this.subscriptions.values()) {
      sub.nonce = '';
      sub.subscribed.clear();
      // A new stream asks at once, paused or not.
      sub.paused = undefined;
      sub.deferred = undefined;
    }
    stream.on('metadata', () => this.connected.set(1));
    // Responses apply one at a time, in order (applying listeners may wait for a socket).
    stream.on('data', (m: JsonObject) => {
      this.applying = this.applying.then(() => this.onResponse(m, stream)).catch((err: Error) => log.error(`xDS: applying a response failed: ${err.message}`));
    });
    stream.on('error', (err: Error) => log.warn(`xDS stream to ${this.target} failed: ${err.message}`));
    // Every call ends with its status, whether the server ended it or the connection failed.
    stream.on('status', () => this.lost(stream));
    for (const sub of this.subscriptions.values()) this.request(sub);
  }

  private request(sub: Subscription, errorDetail?: string): void {
    // A paused type sends nothing until the wait ends; then one request, the latest.
    if (sub.paused) {
      sub.deferred = { errorDetail };
      return;
    }
    if (this.delta) return this.deltaRequest(sub, errorDetail);
    const withNode = !this.setNodeOnFirstMessageOnly || !this.sentNode;
    this.sentNode = true;
    this.send({
      version_info: sub.version,
      ...(withNode ? { node: this.node } : {}),
      ...(sub.names.length ? { resource_names: sub.names } : {}),
      type_url: sub.typeUrl,
      response_nonce: sub.nonce,
      ...(errorDetail !== undefined ? { error_detail: nackDetail(errorDetail) } : {}),
    });
  }

  /**
   * Delta: the first request of a stream says what is held (initial_resource_versions) and, for
   * named types, subscribes the names; later ones subscribe new names, unsubscribe gone ones, and
   * ACK or NACK (response_nonce, error_detail). The node, as in SotW.
   */
  private deltaRequest(sub: Subscription, errorDetail?: string): void {
    const withNode = !this.setNodeOnFirstMessageOnly || !this.sentNode;
    this.sentNode = true;
    const first = sub.nonce === '' && sub.subscribed.size === 0 && errorDetail === undefined;
    const subscribe = sub.names.filter((n) => !sub.subscribed.has(n));
    const unsubscribe = [...sub.subscribed].filter((n) => !sub.names.includes(n));
    for (const n of subscribe) sub.subscribed.add(n);
    for (const n of unsubscribe) sub.subscribed.delete(n);
    this.send({
      ...(withNode ? { node: this.node } : {}),
      type_url: sub.typeUrl,
      ...(subscribe.length ? { resource_names_subscribe: subscribe } : {}),
      ...(unsubscribe.length ? { resource_names_unsubscribe: unsubscribe } : {}),
      ...(first && sub.held.size ? { initial_resource_versions: Object.fromEntries([...sub.held].map(([n, h]) => [n, h.version])) } : {}),
      ...(sub.nonce ? { response_nonce: sub.nonce } : {}),
      ...(errorDetail !== undefined ? { error_detail: nackDetail(errorDetail) } : {}),
    });
  }

  /** Delta: the resources changed and removed, merged into what the subscription holds; the whole set goes to apply(). */
  private merge(sub: Subscription, m: JsonObject): JsonObject[] {
    for (const r of list(m.resources)) {
      const resource = r.resource === undefined ? undefined : obj(r.resource);
      if (typeof r.name === 'string' && resource) sub.held.set(r.name, { version: String(r.version ?? ''), resource });
    }
    for (const name of Array.isArray(m.removed_resources) ? (m.removed_resources as string[]) : []) sub.held.delete(name);
    return [...sub.held.values()].map((h) => h.resource);
  }

  private async onResponse(m: JsonObject, stream: ClientDuplexStream<JsonObject, JsonObject>): Promise<void> {
    const identifier = obj(m.control_plane).identifier;
    if (typeof identifier === 'string' && identifier) this.identifier.set(identifier);
    this.connected.set(1);
    this.backoffMs = BASE_BACKOFF_MS;
    const typeUrl = String(m.type_url ?? '');
    const sub = this.subscriptions.get(typeUrl);
    if (!sub) {
      log.warn(`xDS: a response of type ${typeUrl}, which nothing here asked for, ignored`);
      return;
    }
    // A response of a stream that has since ended: the new stream asks again.
    if (stream !== this.stream) return;
    sub.nonce = String(m.nonce ?? '');
    const version = String((this.delta ? m.system_version_info : m.version_info) ?? '');
    log.debug(`Received gRPC message for ${typeUrl} at version ${version}`);
    const before = this.delta ? new Map(sub.held) : undefined;
    const resources = this.delta ? this.merge(sub, m) : list(m.resources);
    let errors: string[];
    try {
      errors = await sub.apply(version, resources);
    } catch (err) {
      if (!(err instanceof ResponseRefused)) throw err;
      // Refused as a whole: nothing changed, and a delta subscription holds what it held before.
      if (before) {
        sub.held.clear();
        for (const [name, held] of before) sub.held.set(name, held);
      }
      if (stream !== this.stream) return;
      log.warn(`xDS: rejected ${typeUrl} version '${version}' as a whole (nothing of it applied): ${err.message}`);
      this.request(sub, err.message);
      this.initialised(sub);
      return;
    }
    // The stream ended while this applied: the new one asks again with the versions accepted.
    if (stream !== this.stream) {
      if (errors.length === 0) sub.version = version;
      return;
    }
    // Delta: a refused resource is held at the version still served (the managers keep it), so
    // that a new stream's initial_resource_versions tells the control plane the truth.
    if (before && errors.length) {
      for (const r of list(m.resources)) {
        const name = String(r.name ?? '');
        if (!errors.some((e) => e.includes(`'${name}'`))) continue;
        const previous = before.get(name);
        if (previous) sub.held.set(name, previous);
        else sub.held.delete(name);
      }
    }
    if (errors.length) {
      log.warn(`xDS: rejected ${typeUrl} version '${version}': ${errors.join('; ')}`);
      this.request(sub, errors.join('; '));
    } else {
      log.debug(`gRPC config for ${typeUrl} accepted with ${resources.length} resources with version ${version}`);
      sub.version = version;
      const hold = sub.holdAck?.();
      if (hold) this.pause(sub, hold);
      this.request(sub);
    }
    this.initialised(sub);
  }

  /** A first response, accepted or refused, ends the type's initial fetch (as Envoy's init). */
  private initialised(sub: Subscription): void {
    const first = sub.onFirst;
    sub.onFirst = undefined;
    first?.();
  }

  /**
   * Pauses a type until `until` settles (Envoy holds the CDS ACK while clusters warm, so that a
   * control plane waiting for it sends routes only to warm clusters); then sends what it held back.
   */
  private pause(sub: Subscription, until: Promise<void>): void {
    sub.paused = until;
    void until.then(() => {
      if (sub.paused !== until) return;
      sub.paused = undefined;
      const deferred = sub.deferred;
      sub.deferred = undefined;
      if (deferred) this.request(sub, deferred.errorDetail);
    });
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
    clearTimeout(this.drainTimer);
    this.stream?.cancel();
    this.client?.close();
  }
}
