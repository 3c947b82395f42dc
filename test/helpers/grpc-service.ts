import { Server, ServerCredentials, type sendUnaryData, type ServerUnaryCall } from '@grpc/grpc-js';
import { fromProto3JSON } from 'proto3-json-serializer';
import type protobuf from 'protobufjs';
import { BinaryDecoder } from '../../shared/config/proto-binary.js';
import type { JsonObject } from '../../shared/config/proto-json.js';
import { envoySchema } from '../../shared/config/schema.js';

/** Serialises one of Envoy's messages (canonical JSON) for @grpc/grpc-js, and reads it back. */
export function envoyCodec(typeName: string): { serialize: (m: JsonObject) => Buffer; deserialize: (b: Buffer) => JsonObject } {
  const root = envoySchema();
  const type = root.lookupType(typeName);
  return {
    serialize: (m) => Buffer.from(type.encode(fromProto3JSON(type, m as never) as protobuf.Message).finish()),
    deserialize: (b) => new BinaryDecoder(root).decode(type, b).json,
  };
}

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
