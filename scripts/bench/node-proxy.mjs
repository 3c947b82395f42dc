// The baseline: a plain Node reverse proxy (http.createServer + http.request over a keep-alive
// Agent), what a team might write by hand. Prints its port. Usage: node-proxy.mjs <upstream port>
import { createServer, request, Agent } from 'node:http';
const upstreamPort = Number(process.argv[2]);
const agent = new Agent({ keepAlive: true, maxSockets: 128 });
const server = createServer((req, res) => {
  const up = request({ host: '127.0.0.1', port: upstreamPort, method: req.method, path: req.url, headers: req.headers, agent }, (r) => {
    res.writeHead(r.statusCode, r.headers);
    r.pipe(res);
  });
  up.on('error', () => { res.writeHead(502); res.end(); });
  req.pipe(up);
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => console.log(server.address().port));
