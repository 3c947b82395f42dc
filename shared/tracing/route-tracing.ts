import type { IncomingHttpHeaders } from 'node:http';
import { list, obj } from '../config/access.js';
import type { JsonObject } from '../config/proto-json.js';
import { samplingOfFractions, type Sampling } from './sampling.js';

/** Custom tags, and a route's decorator and tracing overrides, compiled (the workers trace: worker/tracing/http-tracing.ts). */

/** A custom tag compiled: its value for a request, or undefined (no tag). */
export type CustomTag = { tag: string; value: (headers: IncomingHttpHeaders, routeMetadata: JsonObject | undefined, clusterMetadata: () => JsonObject | undefined) => string | undefined };

export function compileCustomTags(tags: unknown): CustomTag[] {
  return list(tags).map((t): CustomTag => {
    const tag = String(t.tag);
    if (t.literal !== undefined) {
      const value = String(obj(t.literal).value);
      return { tag, value: () => value };
    }
    if (t.environment !== undefined) {
      const e = obj(t.environment);
      const value = process.env[String(e.name)] || (typeof e.default_value === 'string' ? e.default_value : '');
      return { tag, value: () => value || undefined };
    }
    if (t.request_header !== undefined) {
      const h = obj(t.request_header);
      const name = String(h.name).toLowerCase();
      const fallback = typeof h.default_value === 'string' && h.default_value ? h.default_value : undefined;
      return {
        tag,
        value: (headers) => {
          const v = headers[name];
          const first = Array.isArray(v) ? v[0] : v;
          return first || fallback;
        },
      };
    }
    const m = obj(t.metadata);
    const kind = obj(m.kind);
    const key = obj(m.metadata_key);
    const fallback = typeof m.default_value === 'string' && m.default_value ? m.default_value : undefined;
    const path = list(key.path).map((p) => String(p.key));
    const lookup = (metadata: JsonObject | undefined): string | undefined => {
      let v: unknown = obj(obj(metadata).filter_metadata)[String(key.key)];
      for (const p of path) v = v !== null && typeof v === 'object' ? (v as JsonObject)[p] : undefined;
      if (v === undefined || v === null) return fallback;
      return typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : JSON.stringify(v);
    };
    return { tag, value: (_h, route, cluster) => lookup(kind.route !== undefined ? route : kind.cluster !== undefined ? cluster() : undefined) };
  });
}

/** A route's tracing: its decorator and its `tracing` overrides. */
export interface RouteTracing {
  decorator?: { operation: string; propagate: boolean };
  sampling?: Sampling;
  customTags?: CustomTag[];
}

export function compileRouteTracing(route: JsonObject): RouteTracing | undefined {
  const decorator = route.decorator !== undefined ? obj(route.decorator) : undefined;
  const tracing = route.tracing !== undefined ? obj(route.tracing) : undefined;
  if (!decorator && !tracing) return undefined;
  return {
    ...(decorator ? { decorator: { operation: String(decorator.operation), propagate: decorator.propagate !== false } } : {}),
    ...(tracing ? { sampling: samplingOfFractions(tracing), customTags: compileCustomTags(tracing.custom_tags) } : {}),
  };
}

