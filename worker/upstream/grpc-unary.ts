import type { Client } from '@grpc/grpc-js';
import type protobuf from 'protobufjs';
import type { JsonObject } from '../../shared/config/proto-json.js';
import { grpcCredentials, loadGrpcJs, type GrpcJs } from '../../shared/extensions/transport-sockets/tls/grpc-credentials.js';
import { GrpcCallError } from '../../shared/upstream/async-request.js';
import type { Cluster } from './cluster.js';
import { errorText, type ConfigError } from '../../shared/config/config-error.js';

/**
 * Unary gRPC calls the proxy makes to a service behind a cluster (an authorization service, a
 * rate-limit service): over @grpc/grpc-js to a host the cluster's load balancer picks (over the
 * cluster's TLS transport socket if it has one), one client per cluster and host address, messages
 * encoded with the tree's Envoy schema (loaded on first use, by workers that make such calls only). Counted in the cluster's figures.
 * grpc-js and the JSON codec are loaded on the first call too: 13 MB of a worker's memory and
 * tens of milliseconds of its start that a worker calling no gRPC service does without. So are
 * the schema and the binary decoder, which hold protobufjs (see shared/protobufjs.ts): a filter
 * that will call starts loading them when it is built.
 */

let libraries: Promise<{ grpc: GrpcJs; codec: typeof import('proto3-json-serializer') }> | undefined;

function loadLibraries(): NonNullable<typeof libraries> {
  return (libraries ??= Promise.all([loadGrpcJs(), import('proto3-json-serializer')]).then(([grpc, codec]) => ({ grpc, codec })));
}

/** By cluster name and host address; a cluster updated with another TLS context gets a new client. */
const clients = new Map<string, { client: Client; tls: Cluster['tls'] }>();

function clientFor(grpc: GrpcJs, cluster: Cluster, address: string): Client {
  const key = `${cluster.name}\0${address}`;
  const known = clients.get(key);
  if (known && known.tls === cluster.tls) return known.client;
  known?.client.close();
  const client = new grpc.Client(address, grpcCredentials(grpc, cluster.tls));
  clients.set(key, { client, tls: cluster.tls });
  return client;
}
interface Codecs {
  typeOf(name: string): protobuf.Type;
  decode(type: protobuf.Type, bytes: Buffer): { json: JsonObject; errors: ConfigError[] };
}

let codecs: Promise<Codecs> | undefined;

function loadCodecs(): Promise<Codecs> {
  return (codecs ??= Promise.all([import('../../shared/config/schema.js'), import('../../shared/config/proto-binary.js')]).then(([{ envoySchema }, { BinaryDecoder }]) => {
    const types = new Map<string, protobuf.Type>();
    return {
      typeOf(name) {
        let t = types.get(name);
        if (!t) types.set(name, (t = envoySchema().lookupType(name)));
        return t;
      },
      decode: (type, bytes) => new BinaryDecoder(envoySchema()).decode(type, bytes),
    };
  }));
}

/**
 * Starts loading the schema and the message types (a filter's construction), so that the first
 * call does not wait for them. A failure here is the first call's to report: it looks them up again.
 */
export function prepareGrpcTypes(...names: string[]): void {
  loadCodecs()
    .then((c) => {
      for (const n of names) c.typeOf(n);
    })
    .catch(() => undefined);
}

/** Calls `method` (`/package.Service/Method`) with `message` (canonical JSON of `requestType`); resolves with the response as canonical JSON. */
export async function grpcUnary(cluster: Cluster, method: string, requestType: string, responseType: string, message: JsonObject, timeoutMs: number): Promise<JsonObject> {
  const { typeOf, decode } = await loadCodecs();
  const request = typeOf(requestType);
  const response = typeOf(responseType);
  return call<JsonObject, JsonObject>(
    cluster,
    method,
    (m, codec) => Buffer.from(request.encode(codec.fromProto3JSON(request, m as never) as protobuf.Message).finish()),
    (bytes) => {
      const decoded = decode(response, bytes);
      if (decoded.errors.length) throw new Error(`undecodable ${responseType}: ${errorText(decoded.errors)}`);
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

async function call<Rq, Rs>(cluster: Cluster, method: string, serialize: (m: Rq, codec: typeof import('proto3-json-serializer')) => Buffer, deserialize: (b: Buffer) => Rs, message: Rq, timeoutMs: number): Promise<Rs> {
  const { grpc, codec } = await loadLibraries();
  const host = cluster.pickHost();
  if (!host) throw new GrpcCallError(`no healthy host in cluster '${cluster.name}'`, false);
  const client = clientFor(grpc, cluster, host.address);
  const started = performance.now();
  cluster.stats.rqTotal.inc();
  return new Promise((resolve, reject) => {
    client.makeUnaryRequest<Rq, Rs>(method, (m) => serialize(m, codec), deserialize, message, new grpc.Metadata(), { deadline: Date.now() + timeoutMs }, (err, reply) => {
      if (err || reply === undefined) {
        const timedOut = err?.code === grpc.status.DEADLINE_EXCEEDED;
        if (timedOut) cluster.stats.rqTimeout.inc();
        reject(new GrpcCallError(`${method} to cluster '${cluster.name}' failed: ${err?.details || err?.message || 'no response'}`, timedOut));
        return;
      }
      cluster.stats.response(200, started);
      resolve(reply);
    });
  });
}
