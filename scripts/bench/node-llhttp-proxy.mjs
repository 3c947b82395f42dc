// One of Node's floors for the proxy bench: the least an HTTP/1.1 proxy on Node can do. Node's
// llhttp parses both sides; each request's head is rebuilt and sent on the client connection's own
// upstream connection; the response's head and body go back in one write. No routing, statistics,
// timeouts, pooling or header rules: only what the bench's keep-alive GETs with Content-Length
// responses need, so that it shows what parsing HTTP costs on Node before anything a proxy adds.
// Prints its port. Usage: node-llhttp-proxy.mjs <upstream port>
import { createRequire } from 'node:module';
import { connect, createServer } from 'node:net';
const { HTTPParser, methods } = createRequire(import.meta.url)('_http_common');
const upstreamPort = Number(process.argv[2]);

function parser(type) {
  const p = new HTTPParser();
  p.initialize(type, {}, 16384, 0);
  return p;
}

const server = createServer((client) => {
  client.setNoDelay(true);
  const upstream = connect(upstreamPort, '127.0.0.1');
  upstream.setNoDelay(true);
  const requests = parser(HTTPParser.REQUEST);
  const responses = parser(HTTPParser.RESPONSE);
  requests[HTTPParser.kOnHeadersComplete] = (_major, _minor, fields, method, url) => {
    let head = `${methods[method]} ${url} HTTP/1.1\r\n`;
    for (let i = 0; i < fields.length; i += 2) head += `${fields[i]}: ${fields[i + 1]}\r\n`;
    upstream.write(`${head}\r\n`, 'latin1');
    return 0;
  };
  requests[HTTPParser.kOnBody] = (chunk) => upstream.write(chunk);
  requests[HTTPParser.kOnMessageComplete] = () => {};
  let head = '';
  let body = [];
  responses[HTTPParser.kOnHeadersComplete] = (_major, _minor, fields, _method, _url, status, message) => {
    head = `HTTP/1.1 ${status} ${message}\r\n`;
    for (let i = 0; i < fields.length; i += 2) head += `${fields[i]}: ${fields[i + 1]}\r\n`;
    head += '\r\n';
    return 0;
  };
  responses[HTTPParser.kOnBody] = (chunk) => body.push(chunk);
  responses[HTTPParser.kOnMessageComplete] = () => {
    client.write(Buffer.concat([Buffer.from(head, 'latin1'), ...body]));
    body = [];
  };
  client.on('data', (d) => requests.execute(d));
  upstream.on('data', (d) => responses.execute(d));
  client.on('close', () => upstream.destroy());
  upstream.on('close', () => client.destroy());
  client.on('error', () => {});
  upstream.on('error', () => {});
});
server.listen(0, '127.0.0.1', () => console.log(server.address().port));
