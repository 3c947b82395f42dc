import type { ExtensionDescriptor, HttpFilterDescriptor } from '../../../descriptor.js';
import { grpcWebFactory } from './grpc-web.js';

/** gRPC-Web clients to gRPC services: requests, responses and trailers translated. */
export const extensions: readonly (ExtensionDescriptor | HttpFilterDescriptor)[] = [
  {
    name: 'envoy.filters.http.grpc_web',
    category: 'envoy.filters.http',
    typeName: 'envoy.extensions.filters.http.grpc_web.v3.GrpcWeb',
    description: 'translates gRPC-Web requests and responses to and from gRPC',
    deprecatedNames: ['envoy.grpc_web'],
    create: (name) => grpcWebFactory(name),
  },
];
