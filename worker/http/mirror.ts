import type { IncomingHttpHeaders } from 'node:http';
import { Transform, type Readable, type TransformCallback } from 'node:stream';
import type { MirrorPolicy } from '../../shared/http/mirror-policy.js';
import { stats } from '../../shared/stats/process.js';
import { sendToCluster } from '../upstream/async-client.js';
import type { ClusterManager } from '../upstream/cluster-manager.js';
import { upstreamHeaders } from './upstream-headers.js';

/**
 * RouteAction.request_mirror_policies, as Envoy's: a copy of the request goes to each mirror
 * cluster (`cluster`, or the one `cluster_header` names) for the share `runtime_fraction` gives
 * (all by default), fire and forget: its answer, or its failure, changes nothing for the client.
 * The copy's Host gets `-shadow` appended (before any port) unless
 * `disable_shadow_host_suffix_append`. A body goes with it: it streams to the main upstream as it
 * arrives while a copy is kept, up to 1 MiB (Envoy's buffer limit); a longer body abandons the
 * copy (cluster.<name>.retry_or_shadow_abandoned).
 */

const BODY_LIMIT = 1024 * 1024;

/** `host:port` → `host-shadow:port`, as Envoy names a shadow's authority. */
export function shadowAuthority(authority: string): string {
  const m = /^(\[[^\]]*\]|[^:]*)(:\d+)?$/.exec(authority);
  return m ? `${m[1]}-shadow${m[2] ?? ''}` : `${authority}-shadow`;
}

interface Shadow {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  authority: string;
  timeoutMs: number;
}

/**
 * Sends the shadows of a request that applies now. Returns the body the main request should send
 * instead of its own: a stream that passes everything through while keeping the copy (undefined
 * when the request has no body, or no shadow goes).
 */
export function mirror(policies: MirrorPolicy[], clusters: ClusterManager, shadow: Shadow, body: Readable | Buffer | undefined, abandonedIn: string): Readable | undefined {
  const targets: { name: string; appendSuffix: boolean }[] = [];
  for (const p of policies) {
    if (!p.enabled()) continue;
    const name = p.cluster ?? (p.clusterHeader ? headerValue(shadow.headers[p.clusterHeader]) : undefined);
    if (name && clusters.get(name)) targets.push({ name, appendSuffix: p.appendSuffix });
  }
  if (targets.length === 0) return undefined;
  const send = (payload: Buffer | null) => {
    for (const { name, appendSuffix } of targets) {
      const cluster = clusters.get(name);
      if (!cluster) continue;
      const authority = appendSuffix ? shadowAuthority(shadow.authority) : shadow.authority;
      const headers = upstreamHeaders(shadow.headers, authority, shadow.timeoutMs);
      if (payload) {
        for (let i = headers.length - 2; i >= 0; i -= 2) if (headers[i] === 'content-length' || headers[i] === 'transfer-encoding') headers.splice(i, 2);
        headers.push('content-length', String(payload.length));
      }
      // Fire and forget: the shadow's fate is its cluster's figures, nothing else.
      void sendToCluster(cluster, { method: shadow.method, path: shadow.path, headers, body: payload, timeoutMs: shadow.timeoutMs || 15_000 }).catch(() => undefined);
    }
  };
  if (body === undefined) {
    send(null);
    return undefined;
  }
  if (Buffer.isBuffer(body)) {
    send(body);
    return undefined;
  }
  return teeBody(body, send, () => stats.counter(`cluster.${abandonedIn}.retry_or_shadow_abandoned`).inc());
}

function headerValue(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

/** The body passed through as it comes, a copy kept up to the limit; `done` gets the copy at the end, or `abandoned` runs once it is too long. */
function teeBody(source: Readable, done: (copy: Buffer) => void, abandoned: () => void): Readable {
  const chunks: Buffer[] = [];
  let size = 0;
  let keeping = true;
  const tee = new Transform({
    transform(chunk: Buffer, _enc, next: TransformCallback) {
      if (keeping) {
        size += chunk.length;
        if (size > BODY_LIMIT) {
          keeping = false;
          chunks.length = 0;
          abandoned();
        } else {
          chunks.push(chunk);
        }
      }
      next(null, chunk);
    },
    flush(next: TransformCallback) {
      if (keeping) done(Buffer.concat(chunks, size));
      next();
    },
  });
  source.on('error', (err) => tee.destroy(err));
  return source.pipe(tee);
}
