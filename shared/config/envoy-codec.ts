import { fromProto3JSON } from 'proto3-json-serializer';
import type protobuf from 'protobufjs';
import { BinaryDecoder } from './proto-binary.js';
import type { JsonObject } from './proto-json.js';
import { envoySchema } from './schema.js';

/**
 * Serialises one of Envoy's messages (canonical JSON) to protobuf bytes, and reads it back: the
 * codec a @grpc/grpc-js service definition takes, for services this project plays itself (the
 * rate-limit service script, the services and control plane of the tests).
 */
export function envoyCodec(typeName: string): { serialize: (m: JsonObject) => Buffer; deserialize: (b: Buffer) => JsonObject } {
  const root = envoySchema();
  const type = root.lookupType(typeName);
  return {
    serialize: (m) => Buffer.from(type.encode(fromProto3JSON(type, m as never) as protobuf.Message).finish()),
    deserialize: (b) => new BinaryDecoder(root).decode(type, b).json,
  };
}
