import type { Transform } from 'node:stream';
import type { AccessLogEntry } from '../access-log/entry.js';
import type { JsonObject } from '../config/proto-json.js';
import type { MutableHeaders } from '../header-mutation.js';
import type { RequestView } from '../matchers.js';
import type { AsyncRequest, AsyncResponse } from '../upstream/async-request.js';
import type { RateLimitPolicy } from './rate-limit-policy.js';
import type { BodyCapture } from './body-capture.js';

/**
 * What an HTTP filter sees and may do: the filters of a connection manager's `http_filters` between its first entry and the
 * router, as Envoy runs them: each request's headers go through every filter in order once the
 * route is chosen (a filter may answer itself and stop the chain), and every response's headers
 * go back through them in reverse order before they are written, whether they came from the
 * upstream, a direct response or a local reply.
 */

/** The connection a request came on, as filters that decide by it see it. */
export interface ConnectionView {
  /** The same object for every request of the connection (per-connection state is kept by it). */
  key: object;
  /** The peer's address and port. */
  directRemoteIp: string;
  directRemotePort: number;
  /** The client's address as the connection manager found it (the peer's, a trusted x-forwarded-for entry, an original IP detection's), and its port (0 when read from a header). */
  remoteIp: string;
  remotePort: number;
  localIp: string;
  localPort: number;
  /** TLS: the server name the client asked for (SNI). */
  serverName: string | undefined;
  /** Whether the connection is TLS (the request's scheme is https). */
  tls: boolean;
  /** `HTTP/1.0`, `HTTP/1.1` or `HTTP/2`. */
  protocol: string;
  /** TLS: the client certificate's names (and the certificate, PEM), if it presented one. */
  peer(): { uriSans: string[]; dnsSans: string[]; subject: string; pem: () => string } | undefined;
}

/** The route a request took, as filters read it (the worker's route table makes it). */
export interface FilterRoute {
  /** Route.name, if it has one. */
  name?: string;
  /** 'route' forwards to a cluster; redirects and direct responses are answered by the router. */
  action: { kind: string };
  /** The deprecated `cors` of the route's action and its virtual host (most specific first). */
  legacyCors: JsonObject[];
  /** The route's rate-limit policy (its own and its virtual host's rate_limits). */
  rateLimits?: RateLimitPolicy;
  /** Route.metadata (filter_metadata by filter name), for filters that read it (Lua's handle:metadata()). */
  metadata?: JsonObject;
}

/**
 * A cluster as a filter reaches it (Envoy's thread-local cluster and its async client), on the
 * same connections, load balancing and figures as routed requests.
 */
export interface FilterCluster {
  /** An HTTP request, its whole response collected; rejects with AsyncRequestError. */
  send(rq: AsyncRequest): Promise<AsyncResponse>;
  /** A unary gRPC call, messages as canonical JSON of Envoy's types; rejects with GrpcCallError. */
  grpcUnary(method: string, requestType: string, responseType: string, message: JsonObject, timeoutMs: number): Promise<JsonObject>;
  /** A unary gRPC call whose messages are already encoded (a tracer's OTLP export); rejects with GrpcCallError. */
  grpcUnaryBytes(method: string, message: Buffer, timeoutMs: number): Promise<Buffer>;
  /** Counts a response the filter gave for this cluster, as if the cluster had (Envoy's chargeUpstreamCode). */
  charge(status: number): void;
}

/** The worker's clusters, for the extensions that call a service (filters, tracers). */
export interface FilterClusters {
  get(name: string): FilterCluster | undefined;
  /** Starts loading the schema for these message types (a filter's construction), so that the first call does not wait. */
  prepareGrpcTypes(...names: string[]): void;
}

export interface FilterRequest {
  /** The request; its headers may be changed on their way upstream. */
  rq: RequestView;
  connection: ConnectionView;
  /** The route chosen (none: no route matched; the router will answer 404). */
  route: FilterRoute | undefined;
  /** The cluster the route sends the request to (one of its weighted clusters, chosen once). */
  clusterName: string | undefined;
  /** This filter's per-route configuration (typed_per_filter_config under its name): the route's, then its virtual host's. */
  perRoute: JsonObject[];
  /** Answers the request now (the filters before this one see the response headers); decodeHeaders then returns 'stop'. */
  reply(status: number, headers: MutableHeaders, body?: string): void;
  /** Marks the exchange for the access log: a response flag (ResponseFlag) and, if given, the response code details. */
  flag(bit: number, details?: string): void;
  /**
   * The request is a health check (the health-check filter says so): access logs'
   * not_health_check_filter leaves it out, and its span is not reported (Envoy's setSampled(false)).
   */
  markHealthCheck(): void;
  /** Runs `done` once the exchange is over (answered, or its client gone). */
  finished(done: () => void): void;
  /** The exchange as header values and formats see it (%DOWNSTREAM_REMOTE_ADDRESS% …). */
  entry(): AccessLogEntry;
  /**
   * The request body read whole (then sent upstream as read, with its content-length): undefined
   * when the request has none, 'too_large' past `limit` bytes, 'aborted' if the client went away.
   */
  readBody(limit: number): Promise<Buffer | undefined | 'too_large' | 'aborted'>;
  /** After readBody: the body that goes upstream instead (its content-length follows). */
  replaceBody(body: Buffer): void;
  /**
   * The exchange's dynamic metadata, by namespace (Envoy's filter_metadata): filters write it,
   * access logs print it (%DYNAMIC_METADATA%), later filters read it.
   */
  metadata(): Record<string, Record<string, unknown>>;
  /** Whether the request has a body (a content-length above 0, chunked, or HTTP/2 data to come). */
  hasBody(): boolean;
  /** From decodeHeaders: the request body goes upstream through `transform` (a decompressor), without a content-length; `bytesIn` hears of each chunk that goes in. */
  transformRequestBody(transform: Transform, bytesIn?: (n: number) => void): void;
  /**
   * From encodeHeaders: the response body goes through `transform` (a compressor) on its way to
   * the client; `bytesIn` hears of each chunk that goes in.
   */
  transformBody(transform: Transform, bytesIn?: (n: number) => void): void;
  /**
   * From encodeHeaders: the response's body (up to `limit` bytes) is not sent; at its end `fold`
   * makes headers of it, and the response goes with those headers and no body.
   */
  foldResponseIntoHeaders(limit: number, fold: (status: number, headers: MutableHeaders, body: Buffer) => void): void;
  /**
   * The request's and the response's bodies as kept for a tap session (up to its limits, from
   * the request's start): undefined when no session of this connection manager's tap filter was
   * on when the request came.
   */
  capturedBodies(): { request: BodyCapture; response: BodyCapture } | undefined;
}

export type FilterDecision = 'continue' | 'stop';

export interface HttpFilter {
  /** 'stop' once it has answered; a promise while it holds the request (a delay). */
  decodeHeaders(request: FilterRequest): FilterDecision | Promise<FilterDecision>;
  /**
   * An earlier filter answered the request, so this one never saw its headers; that answer comes
   * through encodeHeaders next, as Envoy's filter manager passes a local reply through every filter
   * of the chain. `request` is for reading (per-route config, metadata): it must not answer.
   */
  answeredBefore?(request: FilterRequest): void;
  /** The response's headers, before they are written. */
  encodeHeaders?(status: number, headers: MutableHeaders): void;
  /** The upstream's trailers, before they go on (what the filter leaves in the map goes on). */
  encodeTrailers?(trailers: MutableHeaders): void;
}

/** One filter of the chain, as configured: makes an instance per request. */
export interface HttpFilterFactory {
  /** The filter's name in http_filters (typed_per_filter_config keys name it). */
  readonly name: string;
  create(): HttpFilter;
  /** HttpFilter.disabled: it runs only where a route's typed_per_filter_config enables it (worker/http/filters/chain.ts). */
  readonly disabledByDefault?: boolean;
}

/** What a connection manager gives its filters. */
export interface FilterContext {
  statPrefix: string;
  /** This proxy's service cluster (the bootstrap node's, or --service-cluster). */
  localCluster: string;
  /** The worker's clusters, for filters that call a service (ext_authz). */
  clusters: FilterClusters;
  /** Whether the server fails health checks now (POST /healthcheck/fail, a drain). */
  healthCheckFailing: () => boolean;
  /** The listener's per_connection_buffer_limit_bytes: the most a filter holds of a body it reads whole (Lua's body()). */
  bufferLimit?: number;
}
