import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { stats } from '../shared/stats/process.js';
import { HttpStats } from '../shared/stats/http-stats.js';
import { posix } from 'node:path';
import { Readable } from 'node:stream';
import { getLogger } from '../shared/log/logger.js';
import type { AdminAccessLog } from './access-log.js';
import { TEXT, type AdminEndpoint, type AdminResponse } from './endpoint.js';
import { helpText } from './help.js';
import { working } from '../shared/idle-housekeeping.js';

/**
 * The admin HTTP server: exact, case-sensitive dispatch on the normalised path; mutating
 * endpoints answer only POST (the seed: any other method gets 400 and changes nothing, where
 * Envoy answers 405); unknown paths get 404 with the help text; with `admin.allow_paths`, a path
 * none of its matchers takes gets 403 first; every response carries Envoy's default headers.
 */

const log = getLogger('admin', import.meta.url);

/** Envoy's query parsing: split on '&', then on the first '='; %XX decoded, '+' kept as a plus. */
function parseParams(raw: string): [string, string][] {
  const params: [string, string][] = [];
  const decode = (s: string) => {
    try {
      return decodeURIComponent(s.replace(/%(?![0-9a-fA-F]{2})/g, '%25'));
    } catch {
      return s; // an invalid sequence stays as written
    }
  };
  for (const item of raw.split('&')) {
    if (!item) continue;
    const eq = item.indexOf('=');
    params.push(eq < 0 ? [decode(item), ''] : [decode(item.slice(0, eq)), decode(item.slice(eq + 1))]);
  }
  return params;
}

const MAX_BODY = 64 * 1024;

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (d: string) => {
      body += d;
      if (body.length > MAX_BODY) req.destroy(new Error('admin request body too large'));
    });
    req.on('end', () => resolve(body));
    req.on('error', reject);
  });
}

/** RFC 3986 dot-segment removal and merged slashes, so `//ready` and `/stats/../ready` reach /ready. */
function normalisePath(path: string): string {
  const normal = posix.normalize(path.replace(/\/+/g, '/'));
  return normal.length > 1 && normal.endsWith('/') && !path.endsWith('/') ? normal.slice(0, -1) : normal;
}

export class AdminServer {
  private readonly byPath: Map<string, AdminEndpoint>;
  private server: Server | undefined;

  constructor(
    readonly endpoints: AdminEndpoint[],
    private readonly accessLog?: AdminAccessLog,
    /** `admin.allow_paths`: when any, a request's whole path, query included, must match one. */
    private readonly allowPaths: readonly ((path: string) => boolean)[] = [],
  ) {
    this.byPath = new Map(endpoints.map((e) => [e.path, e]));
  }

  /**
   * The admin interface counts itself as Envoy's does: its connection manager's `http.admin.*`
   * (requests, their classes and time) and its listener's `listener.admin.*`, in the admin
   * process's own figures (merged into the tree's, reset by /reset_counters like any other).
   */
  private readonly httpStats = new HttpStats('admin', 'listener.admin.');
  private readonly listenerStats = {
    cxTotal: stats.counter('listener.admin.downstream_cx_total'),
    cxActive: stats.gauge('listener.admin.downstream_cx_active'),
    cxDestroy: stats.counter('listener.admin.downstream_cx_destroy'),
  };

  private countRequest(res: ServerResponse): void {
    const h = this.httpStats;
    const started = performance.now();
    h.rqTotal.inc();
    h.rqActive.inc();
    h.rqHttp1Total.inc();
    res.once('close', () => {
      h.rqActive.dec();
      if (res.writableFinished) h.completed(res.statusCode, started);
      else h.rqRxReset.inc();
    });
  }

  /** `received.bytes` gets the request body's size, for the access log. */
  private async dispatch(req: IncomingMessage, received: { bytes: number }): Promise<AdminResponse> {
    const body = await readBody(req);
    received.bytes = Buffer.byteLength(body);
    const url = req.url ?? '/';
    // Envoy checks the allow-list before looking the handler up: an unknown path outside it is 403, not 404.
    if (this.allowPaths.length > 0 && !this.allowPaths.some((allowed) => allowed(url))) {
      return { status: 403, body: `request to path ${url} not allowed` };
    }
    const q = url.indexOf('?');
    const path = normalisePath(q < 0 ? url : url.slice(0, q));
    const endpoint = this.byPath.get(path);
    if (!endpoint) return { status: 404, body: `invalid path. ${helpText(this.endpoints)}` };
    const method = req.method ?? 'GET';
    if (endpoint.mutates && method !== 'POST') {
      log.error(`admin path "${path}" mutates state, method=${method} rather than POST`);
      return { status: 400, body: `Method ${method} not allowed, POST required.` };
    }
    let params = parseParams(q < 0 ? '' : url.slice(q + 1));
    if (params.length === 0 && req.headers['content-type'] === 'application/x-www-form-urlencoded' && !path.startsWith('/stats')) {
      params = parseParams(body);
    }
    const query = new Map<string, string>();
    for (const [k, v] of params) if (!query.has(k)) query.set(k, v);
    return endpoint.handle({ method, path, query, params, raw: req, body });
  }

  private respond(req: IncomingMessage, res: ServerResponse, r: AdminResponse, startedAt: number, bytesReceived: number): void {
    const headers: Record<string, string> = {
      'content-type': r.contentType ?? TEXT,
      'cache-control': 'no-cache, max-age=0',
      'x-content-type-options': 'nosniff',
      server: 'envoy',
      ...r.headers,
    };
    if (r.unchunked) res.removeHeader('transfer-encoding');
    res.writeHead(r.status, headers);
    const done = (bytes: number) => {
      this.accessLog?.record(req, res.statusCode, headers, startedAt, bytesReceived, bytes);
      r.after?.();
    };
    if (typeof r.body === 'string' || Buffer.isBuffer(r.body)) {
      const bytes = Buffer.byteLength(r.body);
      res.end(r.body, () => done(bytes));
      return;
    }
    if (r.body instanceof Readable) {
      const body = r.body;
      let bytes = 0;
      // The response closes when the stream ended or the client went away (a tap or an event
      // stream never ends otherwise): let the stream go, and log the request either way.
      res.once('close', () => {
        body.destroy();
        done(bytes);
      });
      // A stream may have nothing to say for a while (a tap waiting for traffic): the status and
      // headers go now, so the client knows it is attached.
      res.flushHeaders();
      body.on('data', (chunk: Buffer) => (bytes += chunk.length));
      body.once('error', () => res.destroy());
      body.pipe(res);
      return;
    }
    void this.stream(res, r.body).then(done, () => res.destroy());
  }

  /**
   * Writes chunks as the client takes them, so a huge /stats never sits whole in memory, and
   * yields to the event loop between chunks, so that /ready and other requests are answered
   * while it renders.
   */
  private async stream(res: ServerResponse, chunks: Iterable<string>): Promise<number> {
    let bytes = 0;
    for (const chunk of chunks) {
      bytes += Buffer.byteLength(chunk);
      // An empty chunk is a renderer's pause (work done, nothing to write yet): yield only.
      if (chunk && !res.write(chunk)) await new Promise((resolve) => res.once('drain', resolve));
      // Yield after a drain too: a write the kernel takes at once drains on the next tick, and a
      // fast reader then kept the loop from ever reaching other connections (/ready waited out
      // a whole 90 MB /stats/prometheus).
      await new Promise((resolve) => setImmediate(resolve));
      if (res.destroyed) return bytes;
    }
    await new Promise<void>((resolve) => res.end(resolve));
    return bytes;
  }

  /** Serves the listening socket `fd` (the admin address, bound by the supervisor). */
  listen(fd: number): Promise<{ host: string; port: number }> {
    const server = createServer((req, res) => {
      working(); // after an idle spell, the optimising compiler is on again before the answer is rendered
      const startedAt = Date.now();
      const received = { bytes: 0 };
      this.countRequest(res);
      this.dispatch(req, received).then(
        (r) => this.respond(req, res, r, startedAt, received.bytes),
        (err: Error) => {
          if (req.destroyed && !req.complete) {
            // The client went away before its request was read: its business, not a fault here.
            // One line (a stack trace would say nothing), and the access log still counts it.
            log.debug(`admin ${req.method} ${req.url}: the client went away before sending the whole request (${err.message})`);
            this.accessLog?.record(req, 0, {}, startedAt, received.bytes, 0);
            return;
          }
          log.error(`admin ${req.method} ${req.url} failed: ${err.stack ?? err.message}`);
          this.respond(req, res, { status: 500, body: `${err.message}\n` }, startedAt, received.bytes);
        },
      );
    });
    server.on('connection', (socket: Socket) => {
      const l = this.listenerStats;
      const h = this.httpStats;
      l.cxTotal.inc();
      l.cxActive.inc();
      h.cxTotal.inc();
      h.cxActive.inc();
      h.cxHttp1Total.inc();
      socket.once('close', () => {
        l.cxActive.dec();
        l.cxDestroy.inc();
        h.cxActive.dec();
      });
    });
    this.server = server;
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen({ fd }, () => {
        server.off('error', reject);
        const a = server.address() as { address: string; port: number };
        resolve({ host: a.address, port: a.port });
      });
    });
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      if (!this.server) return resolve();
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }
}
