import type { FilterCluster, FilterClusters } from '../../shared/http/filter-api.js';
import { sendToCluster } from './async-client.js';
import type { Cluster } from './cluster.js';
import type { ClusterManager } from './cluster-manager.js';
import { grpcUnary, grpcUnaryBytes, prepareGrpcTypes } from './grpc-unary.js';

/**
 * The worker's clusters as HTTP filters reach them (shared/http/filter-api.ts): the async client
 * and unary gRPC calls over a cluster's own hosts and pools. One view per cluster object, so a
 * filter's call allocates nothing; a cluster replaced by an update gets a view of its own.
 */

const views = new WeakMap<Cluster, FilterCluster>();

function viewOf(cluster: Cluster): FilterCluster {
  let view = views.get(cluster);
  if (!view) {
    view = {
      send: (rq) => sendToCluster(cluster, rq),
      grpcUnary: (method, requestType, responseType, message, timeoutMs) => grpcUnary(cluster, method, requestType, responseType, message, timeoutMs),
      grpcUnaryBytes: (method, message, timeoutMs) => grpcUnaryBytes(cluster, method, message, timeoutMs),
      charge: (status) => cluster.stats.charge(status),
    };
    views.set(cluster, view);
  }
  return view;
}

export function filterClusters(clusters: ClusterManager): FilterClusters {
  return {
    get(name) {
      const cluster = clusters.get(name);
      return cluster && viewOf(cluster);
    },
    prepareGrpcTypes,
  };
}
