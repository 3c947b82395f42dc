import { obj } from '../../shared/config/access.js';
import type { JsonObject } from '../../shared/config/proto-json.js';
import { typeNameOfUrl } from '../../shared/config/wkt.js';
import { canonicalText } from '../../shared/config/resource-hash.js';
import type { ClusterManager } from '../upstream/cluster-manager.js';
import { Span, type Tracer } from '../../shared/tracing/span.js';
import { extensionByTypeName } from '../../shared/extensions/registry.js';
import { isTracer } from '../../shared/extensions/descriptor.js';
import { filterClusters } from '../upstream/filter-clusters.js';

/**
 * The worker's tracers, one per provider configuration (connection managers naming the same one
 * share its batches and figures, as Envoy's drivers are shared by configuration).
 */

export interface TracerContext {
  clusters: ClusterManager;
  node: { id: string; cluster: string };
  /** This proxy's own address (the spans' local endpoint). */
  localAddress: string;
}

const tracers = new Map<string, Tracer>();

/**
 * A connection manager with `tracing` but no tracer (no provider, none in the bootstrap), as
 * Envoy's null tracer: decisions are made and counted, and the request id carries them; no span
 * is reported or propagated.
 */
class NullTracer implements Tracer {
  startSpan(_headers: unknown, name: string, kind: 'SERVER' | 'CLIENT'): Span {
    return new Span(this, { traceId: '', spanId: '', sampled: false }, name, kind);
  }

  childSpan(parent: Span, name: string): Span {
    return new Span(this, parent.context, name, 'CLIENT');
  }

  inject(): void {}

  report(): void {}
}

const nullTracer = new NullTracer();

export function tracerFor(provider: JsonObject | undefined, ctx: TracerContext): Tracer & { namesByHost?: boolean } {
  if (!provider) return nullTracer;
  const key = canonicalText(provider);
  const known = tracers.get(key);
  if (known) return known;
  const config = obj(provider.typed_config);
  const type = typeNameOfUrl(String(config['@type'] ?? ''));
  const ext = extensionByTypeName(type);
  // The loader refuses any other (checkTracingProvider).
  if (!ext || !isTracer(ext)) throw new Error(`tracer ${String(provider.name)} (${type}) is not supported`);
  const tracer = ext.create(config, { clusters: filterClusters(ctx.clusters), node: ctx.node, localAddress: ctx.localAddress });
  tracers.set(key, tracer);
  return tracer;
}
