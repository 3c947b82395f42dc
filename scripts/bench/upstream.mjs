// The benchmark's upstream: 256-byte responses, keep-alive. Prints its port.
import { createServer } from 'node:http';
const body = Buffer.alloc(256, 'x');
const server = createServer((req, res) => {
  req.resume();
  res.writeHead(200, { 'content-type': 'text/plain', 'content-length': body.length });
  res.end(body);
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => console.log(server.address().port));
