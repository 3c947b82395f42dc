import { Client, Metadata, status as GrpcStatus } from '@grpc/grpc-js';
import { fromProto3JSON } from 'proto3-json-serializer';
import type protobuf from 'protobufjs';
import { BinaryDecoder } from '../../shared/config/proto-binary.js';
import type { JsonObject } from '../../shared/config/proto-json.js';
import { envoySchema } from '../../shared/config/schema.js';
import { grpcCredentials } from '../../shared/tls/grpc-credentials.js';
import type { Cluster } from './cluster.js';

/**
 * Unary gRPC calls the proxy makes to a service behind a cluster (an authorization service, a
 * rate-limit service): over @grpc/grpc-js to a host the cluster's load balancer picks (over the
 * cluster's TLS transport socket if it has one), one client per cluster and host address, messages
 * encoded with the tree's Envoy schema (loaded on first use, by workers that make such calls only). Counted in the cluster's figures.
 */

export class GrpcCallError extends Error {
  override name = 'GrpcCallError';
  constructor(
    message: string,
    readonly timedOut: boolean,
  ) {
    super(message);
  }
}

/** By cluster name and host address; a cluster updated with another TLS context gets a new client. */
const clients = new Map<string, { client: Client; tls: Cluster['tls'] }>();

function clientFor(cluster: Cluster, address: string): Client {
  const key = `${cluster.name}\0${address}`;
  const known = clients.get(key);
  if (known && known.tls === cluster.tls) return known.client;
  known?.client.close();
  const client = new Client(address, grpcCredentials(cluster.tls));
  clients.set(key, { client, tls: cluster.tls });
  return client;
}
const types = new Map<string, protobuf.Type>();

function typeOf(name: string): protobuf.Type {
  let t = types.get(name);
  if (!t) types.set(name, (t = envoySchema().lookupType(name)));
  return t;
}

/** Loads the message types now (a filter's construction), so that the first call does not pay for the schema. */
export function prepareGrpcTypes(...names: string[]): void {
  for (const n of names) typeOf(n);
}

/** Calls `method` (`/package.Service/Method`) with `message` (canonical JSON of `requestType`); resolves with the response as canonical JSON. */
export function grpcUnary(cluster: Cluster, method: string, requestType: string, responseType: string, message: JsonObject, timeoutMs: number): Promise<JsonObject> {
  const request = typeOf(requestType);
  const response = typeOf(responseType);
  return call<JsonObject, JsonObject>(
    cluster,
    method,
    (m) => Buffer.from(request.encode(fromProto3JSON(request, m as never) as protobuf.Message).finish()),
    (bytes) => {
      const decoded = new BinaryDecoder(envoySchema()).decode(response, bytes);
      if (decoded.errors.length) throw new Error(`undecodable ${responseType}: ${decoded.errors.join('; ')}`);
      return decoded.json;
    },
    message,
    timeoutMs,
  );
}

/** Calls `method` with a message already encoded (a schema other than Envoy's: OTLP); resolves with the response's bytes. */
export function grpcUnaryBytes(cluster: Cluster, method: string, message: Buffer, timeoutMs: number): Promise<Buffer> {
  return call<Buffer, Buffer>(cluster, method, (b) => b, (b) => b, message, timeoutMs);
}

function call<Rq, Rs>(cluster: Cluster, method: string, serialize: (m: Rq) => Buffer, deserialize: (b: Buffer) => Rs, message: Rq, timeoutMs: number): Promise<Rs> {
  const host = cluster.pickHost();
  if (!host) return Promise.reject(new GrpcCallError(`no healthy host in cluster '${cluster.name}'`, false));
  const client = clientFor(cluster, host.address);
  const started = performance.now();
  cluster.stats.rqTotal.inc();
  return new Promise((resolve, reject) => {
    client.makeUnaryRequest<Rq, Rs>(method, serialize, deserialize, message, new Metadata(), { deadline: Date.now() + timeoutMs }, (err, reply) => {
      if (err || reply === undefined) {
        const timedOut = err?.code === GrpcStatus.DEADLINE_EXCEEDED;
        if (timedOut) cluster.stats.rqTimeout.inc();
        reject(new GrpcCallError(`${method} to cluster '${cluster.name}' failed: ${err?.details || err?.message || 'no response'}`, timedOut));
        return;
      }
      cluster.stats.response(200, started);
      resolve(reply);
    });
  });
}
