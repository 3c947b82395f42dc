import { Server, ServerCredentials, type ServerDuplexStream } from '@grpc/grpc-js';
import { fromProto3JSON } from 'proto3-json-serializer';
import type protobuf from 'protobufjs';
import { BinaryDecoder } from '../../shared/config/proto-binary.js';
import type { JsonObject } from '../../shared/config/proto-json.js';
import { envoySchema } from '../../shared/config/schema.js';
import { ADS_METHOD, CDS_METHOD } from '../../supervisor/xds/grpc-stream.js';
import { waitFor } from './proxy.js';

/**
 * A small xDS control plane for tests, state of the world, over @grpc/grpc-js with the Envoy
 * protos the project loads: it serves ADS and the per-type CDS service, answers each stream with
 * the current resources of the types it asks for (nothing for a type that has none yet), pushes
 * every change to every open stream, and records every DiscoveryRequest it gets.
 */

export const CLUSTER_URL = 'type.googleapis.com/envoy.config.cluster.v3.Cluster';

type Stream = ServerDuplexStream<JsonObject, JsonObject>;

export class TestControlPlane {
  /** Every request received, in order, decoded to canonical JSON. */
  readonly requests: JsonObject[] = [];
  private readonly resources = new Map<string, { version: string; resources: JsonObject[] }>();
  private readonly streams = new Set<{ stream: Stream; types: Set<string> }>();
  private server: Server | undefined;
  private nonce = 0;
  port = 0;

  static async start(port = 0): Promise<TestControlPlane> {
    const cp = new TestControlPlane();
    await cp.listen(port);
    return cp;
  }

  /** Starts serving (again, after stop(), on the same port). */
  async listen(port = this.port): Promise<void> {
    const root = envoySchema();
    const request = root.lookupType('envoy.service.discovery.v3.DiscoveryRequest');
    const response = root.lookupType('envoy.service.discovery.v3.DiscoveryResponse');
    const method = (path: string) => ({
      path,
      requestStream: true,
      responseStream: true,
      requestSerialize: (m: JsonObject) => Buffer.from(request.encode(fromProto3JSON(request, m as never) as protobuf.Message).finish()),
      requestDeserialize: (b: Buffer) => new BinaryDecoder(root).decode(request, b).json,
      responseSerialize: (m: JsonObject) => Buffer.from(response.encode(fromProto3JSON(response, m as never) as protobuf.Message).finish()),
      responseDeserialize: (b: Buffer) => new BinaryDecoder(root).decode(response, b).json,
    });
    const server = new Server();
    const handle = (stream: Stream) => this.serve(stream);
    server.addService({ StreamAggregatedResources: method(ADS_METHOD) } as never, { StreamAggregatedResources: handle });
    server.addService({ StreamClusters: method(CDS_METHOD) } as never, { StreamClusters: handle });
    this.port = await new Promise<number>((resolve, reject) =>
      server.bindAsync(`127.0.0.1:${port}`, ServerCredentials.createInsecure(), (err, bound) => (err ? reject(err) : resolve(bound))),
    );
    this.server = server;
  }

  private serve(stream: Stream): void {
    const entry = { stream, types: new Set<string>() };
    this.streams.add(entry);
    stream.on('data', (rq: JsonObject) => {
      this.requests.push(rq);
      const type = String(rq.type_url ?? '');
      // A first request for a type (no nonce yet) gets the current resources; ACKs and NACKs get nothing.
      if (!entry.types.has(type)) {
        entry.types.add(type);
        this.push(entry, type);
      }
    });
    stream.on('error', () => undefined);
    stream.on('close', () => this.streams.delete(entry));
    stream.on('end', () => {
      this.streams.delete(entry);
      stream.end();
    });
  }

  private push(entry: { stream: Stream; types: Set<string> }, type: string): void {
    const current = this.resources.get(type);
    if (!current) return;
    entry.stream.write({ version_info: current.version, resources: current.resources, type_url: type, nonce: String(++this.nonce) });
  }

  /** Sets the resources of a type (each canonical JSON with its @type) and pushes them to every stream that asked. */
  set(type: string, version: string, resources: JsonObject[]): void {
    this.resources.set(type, { version, resources });
    for (const entry of this.streams) if (entry.types.has(type)) this.push(entry, type);
  }

  /** The last nonce sent. */
  get lastNonce(): string {
    return String(this.nonce);
  }

  /** Resolves with the first request received after `from` (an index into `requests`) that `match` accepts. */
  waitForRequest(what: string, match: (rq: JsonObject) => boolean, from = 0): Promise<JsonObject> {
    return waitFor(what, () => this.requests.slice(from).find(match));
  }

  get openStreams(): number {
    return this.streams.size;
  }

  /** Stops at once: every stream ends, as when a control plane dies. */
  stop(): void {
    this.server?.forceShutdown();
    this.server = undefined;
    this.streams.clear();
  }
}
