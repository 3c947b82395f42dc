// A Zipkin collector stand-in for trying tracing (examples/tracing.yaml): accepts spans on
// POST /api/v2/spans (JSON v2, as the proxy's HTTP_JSON sends them; 202 as Zipkin answers),
// prints one line per span, and lists what it has at GET /api/v2/spans. Kept in memory (the last
// 10,000 spans). For trying things out, not for production: use Zipkin or Jaeger there.
// Usage: node --import tsx scripts/zipkin-collector.ts [port]   (prints its port; default 9411)
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface CollectedSpan {
  traceId: string;
  id: string;
  parentId?: string;
  name: string;
  kind?: string;
  duration?: number;
  localEndpoint?: { serviceName?: string };
  tags?: Record<string, string>;
  shared?: boolean;
}

export async function startZipkinCollector(port = 0, print = false): Promise<{ port: number; spans: CollectedSpan[]; close: () => Promise<void> }> {
  const spans: CollectedSpan[] = [];
  const server: Server = createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/api/v2/spans') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(spans));
      return;
    }
    if (req.method !== 'POST' || req.url !== '/api/v2/spans') {
      res.writeHead(404).end();
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let batch: CollectedSpan[];
      try {
        batch = JSON.parse(Buffer.concat(chunks).toString()) as CollectedSpan[];
      } catch {
        res.writeHead(400).end('not JSON v2');
        return;
      }
      spans.push(...batch);
      spans.splice(0, Math.max(0, spans.length - 10_000));
      if (print) {
        for (const s of batch) {
          console.log(`trace ${s.traceId} span ${s.id} parent ${s.parentId ?? '-'}${s.shared ? ' (shared)' : ''} ${s.kind ?? ''} ${s.localEndpoint?.serviceName ?? ''} "${s.name}" ${s.duration ?? 0} µs status ${s.tags?.['http.status_code'] ?? '-'}`);
        }
      }
      res.writeHead(202).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, spans, close: () => new Promise((r) => server.close(() => r())) };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { port } = await startZipkinCollector(Number(process.argv[2] ?? 9411), true);
  console.log(`Zipkin collector on http://127.0.0.1:${port}/api/v2/spans`);
}
