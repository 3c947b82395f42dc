import { ResponseFlag } from '../../../../access-log/entry.js';
import { list, obj } from '../../../../config/access.js';
import type { JsonObject } from '../../../../config/proto-json.js';
import { durationMs, httpStatusCode } from '../../../../config/wkt.js';
import { applyHeadersToAdd, compileHeadersToAdd, type HeaderToAdd, type MutableHeaders } from '../../../../header-mutation.js';
import { requestHeader } from '../../../../matchers.js';
import { boundSlots } from '../../../../ratelimit/bucket-slots.js';
import { bucketShape, LocalBucketState, TokenBucket, treeBuckets, type BucketShape } from '../../../../ratelimit/token-buckets.js';
import { compileRuntimeFraction } from '../../../../runtime.js';
import { stats } from '../../../../stats/process.js';
import type { Counter } from '../../../../stats/store.js';
import { descriptorsOf, type Descriptor, type VhRateLimits } from '../../../../http/rate-limit-policy.js';
import type { FilterDecision, FilterRequest, HttpFilter, HttpFilterFactory } from '../../../../http/filter-api.js';
import { isGrpcContentType } from '../../../../http/grpc.js';

/**
 * envoy.filters.http.local_ratelimit, as Envoy's: each request the filter is enabled for
 * (`filter_enabled`, 0% unless set) takes a token from its bucket; without one it is rate limited,
 * and answered (`status`, 429 by default, or a gRPC UNAVAILABLE / RESOURCE_EXHAUSTED) if the
 * limit is enforced for it (`filter_enforced`), else sent on with
 * `request_headers_to_add_when_not_enforced`. Descriptors (entries built by the route's
 * `rate_limits` of the filter's `stage`) have buckets of their own, taken from first, slowest
 * first; the filter's bucket too unless `always_consume_default_token_bucket` is false.
 *
 * The buckets are the tree's (shared/ratelimit/token-buckets.ts): every worker takes from the
 * same ones, as Envoy's worker threads do, unless `local_rate_limit_per_downstream_connection`
 * gives each connection its own. A route's configuration (typed_per_filter_config) has buckets of
 * its own. Counted in `<stat_prefix>.http_local_rate_limit.{enabled,ok,rate_limited,enforced}`.
 */

/** Envoy's local rate limit leaves out every rate limit with a disable_key. */
const NO_DISABLE_KEYS = () => false;

/** google.rpc.Code: UNAVAILABLE, RESOURCE_EXHAUSTED. */
const GRPC_UNAVAILABLE = 14;
const GRPC_RESOURCE_EXHAUSTED = 8;

interface Counters {
  enabled: Counter;
  ok: Counter;
  rateLimited: Counter;
  enforced: Counter;
}

interface Settings {
  counters: Counters;
  status: number;
  enabled: () => boolean;
  enforced: () => boolean;
  requestHeaders: HeaderToAdd[];
  responseHeaders: HeaderToAdd[];
  stage: number;
  vh: VhRateLimits;
  alwaysConsumeDefault: boolean;
  grpcStatus: number;
  xRateLimitHeaders: boolean;
  perConnection: boolean;
  /** The filter's own bucket (none without a token_bucket: nothing is limited by it). */
  own: BucketShape | undefined;
  /** The descriptors' buckets, by their entries (see descriptorKey). */
  descriptors: Map<string, { index: number; shape: BucketShape }>;
  /** The slots the supervisor gave this configuration: its own bucket's, then each descriptor's. */
  slots: number[];
}

/** One configuration's buckets: the tree's, or a connection's own. */
interface Buckets {
  own: TokenBucket | undefined;
  descriptors: TokenBucket[];
}

function descriptorKey(entries: readonly (readonly [string, string])[]): string {
  return entries.map(([k, v]) => `${k}\u0000${v}`).join('\u0001');
}

function shapeOf(tokenBucket: unknown): BucketShape {
  const t = obj(tokenBucket);
  return bucketShape(t, typeof t.fill_interval === 'string' ? durationMs(t.fill_interval) : 0);
}

const compiled = new WeakMap<JsonObject, Settings>();

function settingsOf(config: JsonObject): Settings {
  let s = compiled.get(config);
  if (s) return s;
  const slots = boundSlots(config);
  if (!slots) throw new Error(`local rate limit '${String(config.stat_prefix)}': no token-bucket slots were given to this configuration`);
  const prefix = `${String(config.stat_prefix)}.http_local_rate_limit.`;
  const status = config.status !== undefined ? httpStatusCode(obj(config.status).code) : 429;
  const descriptors = new Map<string, { index: number; shape: BucketShape }>();
  for (const [i, d] of list(config.descriptors).entries()) {
    descriptors.set(descriptorKey(list(d.entries).map((e) => [String(e.key), String(e.value ?? '')] as const)), { index: i, shape: shapeOf(d.token_bucket) });
  }
  s = {
    counters: {
      enabled: stats.counter(`${prefix}enabled`),
      ok: stats.counter(`${prefix}ok`),
      rateLimited: stats.counter(`${prefix}rate_limited`),
      enforced: stats.counter(`${prefix}enforced`),
    },
    // Envoy: a status under 400 would not say "refused"; 429 is used instead.
    status: status >= 400 ? status : 429,
    enabled: config.filter_enabled !== undefined ? compileRuntimeFraction(obj(config.filter_enabled)) : () => false,
    enforced: config.filter_enforced !== undefined ? compileRuntimeFraction(obj(config.filter_enforced)) : () => false,
    requestHeaders: compileHeadersToAdd(config.request_headers_to_add_when_not_enforced),
    responseHeaders: compileHeadersToAdd(config.response_headers_to_add),
    stage: Number(config.stage ?? 0),
    vh: (config.vh_rate_limits ?? 'OVERRIDE') as VhRateLimits,
    alwaysConsumeDefault: config.always_consume_default_token_bucket !== false,
    grpcStatus: config.rate_limited_as_resource_exhausted === true ? GRPC_RESOURCE_EXHAUSTED : GRPC_UNAVAILABLE,
    xRateLimitHeaders: config.enable_x_ratelimit_headers === 'DRAFT_VERSION_03',
    perConnection: config.local_rate_limit_per_downstream_connection === true,
    own: config.token_bucket !== undefined ? shapeOf(config.token_bucket) : undefined,
    descriptors,
    slots,
  };
  compiled.set(config, s);
  return s;
}

const treeBucketsOf = new WeakMap<Settings, Buckets>();
/** Each connection's own buckets, per configuration (local_rate_limit_per_downstream_connection). */
const connectionBuckets = new WeakMap<object, Map<Settings, Buckets>>();

function bucketsOf(s: Settings, connectionKey: object): Buckets {
  if (s.perConnection) {
    let perConfig = connectionBuckets.get(connectionKey);
    if (!perConfig) connectionBuckets.set(connectionKey, (perConfig = new Map()));
    let b = perConfig.get(s);
    if (!b) perConfig.set(s, (b = makeBuckets(s, () => new LocalBucketState())));
    return b;
  }
  let b = treeBucketsOf.get(s);
  if (!b) {
    const region = treeBuckets();
    treeBucketsOf.set(s, (b = makeBuckets(s, (i) => region.state(s.slots[i]!))));
  }
  return b;
}

function makeBuckets(s: Settings, state: (slotIndex: number) => ConstructorParameters<typeof TokenBucket>[0]): Buckets {
  return {
    own: s.own ? new TokenBucket(state(0), s.own) : undefined,
    descriptors: [...s.descriptors.values()].map((d) => new TokenBucket(state(1 + d.index), d.shape)),
  };
}

/** Envoy's LocalRateLimiterImpl::requestAllowed: the bucket that decided, and whether the request may go. */
function requestAllowed(s: Settings, buckets: Buckets, descriptors: Descriptor[]): { allowed: boolean; bucket: TokenBucket | undefined } {
  const matched: TokenBucket[] = [];
  for (const d of descriptors) {
    const found = s.descriptors.get(descriptorKey(d));
    if (found) matched.push(buckets.descriptors[found.index]!);
  }
  // The slowest-filling first: a request one of them refuses then costs the others nothing.
  if (matched.length > 1) matched.sort((a, b) => a.shape.rate - b.shape.rate);
  for (const bucket of matched) if (!bucket.consume()) return { allowed: false, bucket };
  if ((matched.length === 0 || s.alwaysConsumeDefault) && buckets.own) {
    if (!buckets.own.consume()) return { allowed: false, bucket: buckets.own };
    return { allowed: true, bucket: matched[0] ?? buckets.own };
  }
  return { allowed: true, bucket: matched[0] };
}

/** The draft-03 X-RateLimit headers of the bucket that decided. */
function xRateLimitHeaders(bucket: TokenBucket): MutableHeaders {
  return {
    'x-ratelimit-limit': String(bucket.shape.maxTokens),
    'x-ratelimit-remaining': String(Math.floor(bucket.remaining())),
    'x-ratelimit-reset': String(Math.floor(bucket.nextTokenIn())),
  };
}

class LocalRateLimitFilter implements HttpFilter {
  private decided: { settings: Settings; bucket: TokenBucket } | undefined;

  constructor(
    private readonly filterSettings: Settings,
    private readonly localCluster: string,
  ) {}

  decodeHeaders(request: FilterRequest): FilterDecision {
    const s = request.perRoute.length ? settingsOf(request.perRoute[0]!) : this.filterSettings;
    if (!s.enabled()) return 'continue';
    s.counters.enabled.inc();
    const descriptors = s.descriptors.size
      ? descriptorsOf(request.route?.rateLimits, s.stage, s.vh, { rq: request.rq, remoteIp: request.connection.remoteIp, clusterName: request.clusterName, localCluster: this.localCluster }, NO_DISABLE_KEYS)
      : [];
    const result = requestAllowed(s, bucketsOf(s, request.connection.key), descriptors);
    if (result.bucket) this.decided = { settings: s, bucket: result.bucket };
    if (result.allowed) {
      s.counters.ok.inc();
      return 'continue';
    }
    s.counters.rateLimited.inc();
    if (!s.enforced()) {
      if (s.requestHeaders.length) applyHeadersToAdd(request.rq.headers as MutableHeaders, s.requestHeaders, request.entry());
      return 'continue';
    }
    s.counters.enforced.inc();
    request.flag(ResponseFlag.rateLimited, 'local_rate_limited');
    const headers: MutableHeaders = s.xRateLimitHeaders && result.bucket ? xRateLimitHeaders(result.bucket) : {};
    if (s.responseHeaders.length) applyHeadersToAdd(headers, s.responseHeaders, request.entry());
    if (isGrpcContentType(requestHeader(request.rq, 'content-type'))) {
      // A gRPC client hears it as a gRPC status, in a trailers-only response.
      request.reply(200, { ...headers, 'content-type': 'application/grpc', 'grpc-status': String(s.grpcStatus), 'grpc-message': 'local_rate_limited' });
    } else {
      request.reply(s.status, headers, 'local_rate_limited');
    }
    return 'stop';
  }

  encodeHeaders(_status: number, headers: MutableHeaders): void {
    if (!this.decided?.settings.xRateLimitHeaders) return;
    Object.assign(headers, xRateLimitHeaders(this.decided.bucket));
  }
}

export function localRateLimitFactory(name: string, config: JsonObject, localCluster: string): HttpFilterFactory {
  const settings = settingsOf(config);
  return { name, create: () => new LocalRateLimitFilter(settings, localCluster) };
}
