// A small rate-limit service for trying the global rate limit filter (examples/ratelimit.yaml):
// Envoy's envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit over gRPC, with limits in
// the configuration format of envoyproxy/ratelimit (domain, descriptors by key and optional value,
// nested; rate_limit: unit + requests_per_unit), counted in fixed windows in this process's memory.
// For trying things out, not for production: use envoyproxy/ratelimit (Redis-backed) there.
// Usage: node --import tsx scripts/ratelimit-service.ts <limits.yaml> [port]   (prints its port)
import { readFileSync } from 'node:fs';
import { Server, ServerCredentials } from '@grpc/grpc-js';
import { load } from 'js-yaml';
import { envoyCodec } from '../shared/config/envoy-codec.js';
import type { JsonObject } from '../shared/config/proto-json.js';

interface Limit {
  unit: string;
  requests_per_unit: number;
}
interface DescriptorNode {
  key: string;
  value?: string;
  rate_limit?: Limit;
  descriptors?: DescriptorNode[];
}
interface Limits {
  domain: string;
  descriptors?: DescriptorNode[];
}

const UNIT_SECONDS: Record<string, number> = { second: 1, minute: 60, hour: 3600, day: 86400 };

/** The limit for one descriptor (its entries in order), as envoyproxy/ratelimit finds it: an exact value first, then the key alone. */
export function limitFor(nodes: DescriptorNode[] | undefined, entries: { key: string; value: string }[]): Limit | undefined {
  let level = nodes;
  let found: DescriptorNode | undefined;
  for (const { key, value } of entries) {
    found = level?.find((n) => n.key === key && n.value === value) ?? level?.find((n) => n.key === key && n.value === undefined);
    if (!found) return undefined;
    level = found.descriptors;
  }
  return found?.rate_limit;
}

/** Counts hits per descriptor in fixed windows of the limit's unit. */
export class FixedWindows {
  private readonly windows = new Map<string, { start: number; hits: number }>();

  constructor(private readonly limits: Limits) {}

  check(domain: string, descriptors: { entries: { key: string; value: string }[] }[], addend: number, now = Date.now()): JsonObject {
    let over = false;
    const statuses = descriptors.map((d) => {
      const limit = domain === this.limits.domain ? limitFor(this.limits.descriptors, d.entries) : undefined;
      if (!limit) return { code: 'OK' };
      const windowMs = (UNIT_SECONDS[limit.unit.toLowerCase()] ?? 1) * 1000;
      const key = `${domain}\u0000${d.entries.map((e) => `${e.key}=${e.value}`).join('\u0000')}`;
      const start = Math.floor(now / windowMs) * windowMs;
      const w = this.windows.get(key);
      const window = w && w.start === start ? w : { start, hits: 0 };
      window.hits += addend;
      this.windows.set(key, window);
      const code = window.hits > limit.requests_per_unit ? 'OVER_LIMIT' : 'OK';
      if (code === 'OVER_LIMIT') over = true;
      const resetS = Math.ceil((start + windowMs - now) / 1000);
      return { code, current_limit: { requests_per_unit: limit.requests_per_unit, unit: limit.unit.toUpperCase() }, limit_remaining: Math.max(0, limit.requests_per_unit - window.hits), duration_until_reset: `${resetS}s` };
    });
    return { overall_code: over ? 'OVER_LIMIT' : 'OK', statuses };
  }
}

/** Serves ShouldRateLimit for `limits` on 127.0.0.1:`port` (0: any); resolves to the port and a way to stop. */
export async function startRateLimitService(limits: Limits, port = 0): Promise<{ port: number; close: () => Promise<void> }> {
  const windows = new FixedWindows(limits);
  const rq = envoyCodec('envoy.service.ratelimit.v3.RateLimitRequest');
  const rs = envoyCodec('envoy.service.ratelimit.v3.RateLimitResponse');
  const server = new Server();
  const path = '/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit';
  server.addService(
    { ShouldRateLimit: { path, requestStream: false, responseStream: false, requestSerialize: rq.serialize, requestDeserialize: rq.deserialize, responseSerialize: rs.serialize, responseDeserialize: rs.deserialize } } as never,
    {
      ShouldRateLimit: (call: { request: JsonObject }, callback: (err: null, reply: JsonObject) => void) => {
        const r = call.request as { domain?: string; descriptors?: { entries?: { key: string; value: string }[] }[]; hits_addend?: number };
        const descriptors = (r.descriptors ?? []).map((d) => ({ entries: d.entries ?? [] }));
        callback(null, windows.check(r.domain ?? '', descriptors, r.hits_addend || 1));
      },
    },
  );
  const bound = await new Promise<number>((resolve, reject) => server.bindAsync(`127.0.0.1:${port}`, ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))));
  return { port: bound, close: () => new Promise<void>((resolve) => server.tryShutdown(() => resolve())) };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [file, port] = process.argv.slice(2);
  if (!file) {
    console.error('usage: node --import tsx scripts/ratelimit-service.ts <limits.yaml> [port]');
    process.exit(2);
  }
  const service = await startRateLimitService(load(readFileSync(file, 'utf8')) as Limits, Number(port ?? 0));
  console.log(service.port);
  const stop = () => void service.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
