// One of Node's floors for the proxy bench: a byte relay, no HTTP at all. Each client connection
// gets its own upstream connection, and bytes are copied both ways as they come. This is the least
// CPU any proxy on Node's net sockets can spend per request: two reads and two writes.
// Prints its port. Usage: node-relay.mjs <upstream port>
import { connect, createServer } from 'node:net';
const upstreamPort = Number(process.argv[2]);
const server = createServer((client) => {
  client.setNoDelay(true);
  const upstream = connect(upstreamPort, '127.0.0.1');
  upstream.setNoDelay(true);
  client.on('data', (d) => upstream.write(d));
  upstream.on('data', (d) => client.write(d));
  client.on('close', () => upstream.destroy());
  upstream.on('close', () => client.destroy());
  client.on('error', () => {});
  upstream.on('error', () => {});
});
server.listen(0, '127.0.0.1', () => console.log(server.address().port));
