import type { AsyncRequest, AsyncResponse } from '../../shared/upstream/async-request.js';
import type { FilterCluster, FilterClusters } from '../../shared/http/filter-api.js';

/** Clusters as an extension reaches them, each call recorded and answered as the test says: no sockets. */
export class FakeClusters implements FilterClusters {
  readonly sent: { cluster: string; rq: AsyncRequest }[] = [];
  readonly grpc: { cluster: string; method: string; message: Buffer }[] = [];

  constructor(
    private readonly names: string[],
    private readonly answer: (rq: AsyncRequest) => AsyncResponse = () => ({ status: 200, headers: {}, body: Buffer.alloc(0) }),
  ) {}

  get(name: string): FilterCluster | undefined {
    if (!this.names.includes(name)) return undefined;
    return {
      send: (rq) => {
        this.sent.push({ cluster: name, rq });
        return Promise.resolve(this.answer(rq));
      },
      grpcUnary: () => Promise.reject(new Error('not in this fake')),
      grpcUnaryBytes: (method, message) => {
        this.grpc.push({ cluster: name, method, message });
        return Promise.resolve(Buffer.alloc(0));
      },
      charge: () => {},
    };
  }

  prepareGrpcTypes(): void {}
}
