// A WebSocket echo server, and a one-shot client, for trying WebSockets through the proxy
// (examples/websocket.yaml). The server answers every message with the same message, and tags
// each with the request's path in its 101 (x-echo-path), so a client sees what arrived.
// Usage: node --import tsx scripts/websocket-echo.ts serve [port]          (prints its port)
//        node --import tsx scripts/websocket-echo.ts send <ws-url> <message…>   (prints the echoes)
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import WebSocket, { WebSocketServer } from 'ws';

export async function startWebSocketEcho(port = 0): Promise<{ port: number; close: () => Promise<void> }> {
  const server = new WebSocketServer({ port, host: '127.0.0.1' });
  server.on('headers', (headers, req) => headers.push(`x-echo-path: ${req.url ?? '/'}`));
  server.on('connection', (socket) => socket.on('message', (data, binary) => socket.send(data, { binary })));
  await once(server, 'listening');
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise((resolve) => {
        for (const client of server.clients) client.terminate();
        server.close(() => resolve());
      }),
  };
}

/** Opens `url`, sends each message in turn and collects its echo, then closes. */
export async function sendMessages(url: string, messages: string[]): Promise<string[]> {
  const ws = new WebSocket(url);
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('unexpected-response', (_req, res) => reject(new Error(`the handshake was answered ${res.statusCode}`)));
    ws.once('error', reject);
  });
  const echoes: string[] = [];
  for (const message of messages) {
    const reply = once(ws, 'message') as Promise<[Buffer]>;
    ws.send(message);
    echoes.push((await reply)[0].toString());
  }
  ws.close(1000);
  await once(ws, 'close');
  return echoes;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [mode, ...rest] = process.argv.slice(2);
  if (mode === 'serve') {
    const { port } = await startWebSocketEcho(Number(rest[0] ?? 0));
    console.log(`WebSocket echo on ws://127.0.0.1:${port}`);
  } else if (mode === 'send' && rest.length >= 2) {
    try {
      for (const echo of await sendMessages(rest[0]!, rest.slice(1))) console.log(echo);
    } catch (err) {
      console.error((err as Error).message);
      process.exit(1);
    }
  } else {
    console.error('usage: websocket-echo.ts serve [port] | send <ws-url> <message…>');
    process.exit(2);
  }
}
