import { Server, ServerCredentials, type sendUnaryData, type ServerUnaryCall } from '@grpc/grpc-js';
import { envoyCodec } from '../../shared/config/envoy-codec.js';
import type { JsonObject } from '../../shared/config/proto-json.js';

/**
 * A gRPC server on 127.0.0.1:0 with one unary method of Envoy's API (`/package.Service/Method`),
 * for a test to play a service; plaintext unless `credentials` (e.g. ServerCredentials.createSsl).
 */
export async function startUnaryService(
  method: string,
  requestType: string,
  responseType: string,
  handle: (call: ServerUnaryCall<JsonObject, JsonObject>, callback: sendUnaryData<JsonObject>) => void,
  credentials: ServerCredentials = ServerCredentials.createInsecure(),
): Promise<{ server: Server; port: number; close: () => Promise<void> }> {
  const rq = envoyCodec(requestType);
  const rs = envoyCodec(responseType);
  const server = new Server();
  const name = method.split('/').at(-1)!;
  server.addService(
    { [name]: { path: method, requestStream: false, responseStream: false, requestSerialize: rq.serialize, requestDeserialize: rq.deserialize, responseSerialize: rs.serialize, responseDeserialize: rs.deserialize } } as never,
    { [name]: handle },
  );
  const port = await new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', credentials, (err, p) => (err ? reject(err) : resolve(p))));
  return { server, port, close: () => new Promise<void>((resolve) => server.tryShutdown(() => resolve())) };
}
