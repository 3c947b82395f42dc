import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { readFileSync } from 'node:fs';
import { connect, createServer as createNetServer, type Server as NetServer } from 'node:net';

/**
 * A real upstream HTTP server on 127.0.0.1:0 for integration tests. Paths:
 *   /echo         200, body = {name, method, url, headers, body}
 *   /hold?key=K   answers "<name> held" once the test calls release(K): a response that stays in
 *                 flight for exactly as long as the test needs, whatever the machine's load
 *   /flaky?key=K&fail=N   503 for the first N requests with key K, then 200
 *   /status?code=N        that status
 *   anything else 200 "<name>"
 */
export interface Upstream {
  port: number;
  name: string;
  hits: number;
  /** TCP connections accepted. */
  connections: number;
  /** Requests to /hold?key=K waiting now. */
  held: (key: string) => number;
  /** Answers every /hold?key=K waiting, and any later one at once. */
  release: (key: string) => void;
  server: Server;
  close: () => Promise<void>;
}

export function startUpstream(name: string): Promise<Upstream> {
  const failures = new Map<string, number>();
  const holds = new Map<string, { waiting: Set<ServerResponse>; released: boolean }>();
  const hold = (key: string) => holds.get(key) ?? holds.set(key, { waiting: new Set(), released: false }).get(key)!;
  const upstream = { name, hits: 0, connections: 0 } as Upstream;
  upstream.held = (key) => hold(key).waiting.size;
  upstream.release = (key) => {
    const h = hold(key);
    h.released = true;
    for (const res of h.waiting) res.end(`${name} held`);
    h.waiting.clear();
  };
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    upstream.hits++;
    const url = new URL(req.url ?? '/', 'http://x');
    const chunks: Buffer[] = [];
    try {
      for await (const c of req) chunks.push(c as Buffer);
    } catch {
      return; // the proxy gave up on this request midway (its client broke the body)
    }
    const body = Buffer.concat(chunks).toString();
    switch (url.pathname) {
      case '/echo':
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ name, method: req.method, url: req.url, headers: req.headers, body }));
        return;
      case '/hold': {
        const h = hold(url.searchParams.get('key') ?? '');
        if (h.released) res.end(`${name} held`);
        else {
          h.waiting.add(res);
          res.on('close', () => h.waiting.delete(res));
        }
        return;
      }
      case '/flaky': {
        const key = url.searchParams.get('key') ?? '';
        const seen = failures.get(key) ?? 0;
        failures.set(key, seen + 1);
        if (seen < Number(url.searchParams.get('fail') ?? 1)) {
          res.writeHead(503);
          res.end('flaky');
        } else res.end(`${name} recovered after ${seen}`);
        return;
      }
      case '/status':
        res.writeHead(Number(url.searchParams.get('code') ?? 200));
        res.end(name);
        return;
      default:
        res.end(name);
    }
  });
  server.on('connection', () => upstream.connections++);
  upstream.server = server;
  upstream.close = () => new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => {
    upstream.port = (server.address() as { port: number }).port;
    resolve(upstream);
  }));
}

/** A TCP echo server (for the TCP proxy). */
export function startEcho(): Promise<{ port: number; server: NetServer }> {
  // A client may reset the connection (a TCP health check closes as soon as it has its answer).
  const server = createNetServer((s) => s.on('error', () => s.destroy()).pipe(s));
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ port: (server.address() as { port: number }).port, server })));
}

/**
 * Something to connect to that refuses, and goes on refusing: a port below the kernel's ephemeral
 * range (which every port-0 bind, in this run or another, draws from) that refuses when picked.
 * A port that was merely free a moment ago could be handed to another test's server meanwhile.
 */
export async function closedPort(): Promise<number> {
  const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
  for (;;) {
    const port = 1024 + Math.floor(Math.random() * (low - 1024));
    const refused = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.destroy();
        resolve(false);
      });
      socket.on('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
    });
    if (refused) return port;
  }
}

/** An h2c (prior knowledge) upstream that answers with the protocol it saw. */
export async function startH2Upstream(): Promise<{ port: number; close: () => Promise<void> }> {
  const { createServer: createH2 } = await import('node:http2');
  const server = createH2((req, res) => {
    req.resume();
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ httpVersion: req.httpVersion, path: req.url, authority: req.headers[':authority'], forwardedFor: req.headers['x-forwarded-for'] }));
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({
    port: (server.address() as { port: number }).port,
    close: () => new Promise((r) => server.close(() => r())),
  })));
}

/** A plain TCP server holding a free port (to make that port busy). */
export function listenOnFreePort(): Promise<NetServer> {
  return new Promise((resolve) => {
    const server = createNetServer();
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}
