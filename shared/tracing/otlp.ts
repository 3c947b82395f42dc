import type protobuf from 'protobufjs';
import { protobufjs } from '../protobufjs.js';

/**
 * The parts of OpenTelemetry's OTLP trace protocol (opentelemetry-proto, v1) that this proxy
 * exports: ExportTraceServiceRequest and the messages in it, and the TraceService it is sent to.
 * Written out here by field number (the protocol's stable wire contract) for protobufjs, which
 * the proxy already carries: the @opentelemetry/otlp-transformer package would add a dozen
 * packages to every worker for the same bytes (see docs/observability.md, "Tracing").
 */

const KEY_VALUE = { fields: { key: { type: 'string', id: 1 }, value: { type: 'AnyValue', id: 2 } } };

const DESCRIPTOR = {
  nested: {
    opentelemetry: {
      nested: {
        proto: {
          nested: {
            common: {
              nested: {
                v1: {
                  nested: {
                    AnyValue: {
                      oneofs: { value: { oneof: ['stringValue', 'boolValue', 'intValue', 'doubleValue', 'arrayValue', 'kvlistValue', 'bytesValue'] } },
                      fields: {
                        stringValue: { type: 'string', id: 1 },
                        boolValue: { type: 'bool', id: 2 },
                        intValue: { type: 'int64', id: 3 },
                        doubleValue: { type: 'double', id: 4 },
                        arrayValue: { type: 'ArrayValue', id: 5 },
                        kvlistValue: { type: 'KeyValueList', id: 6 },
                        bytesValue: { type: 'bytes', id: 7 },
                      },
                    },
                    ArrayValue: { fields: { values: { rule: 'repeated', type: 'AnyValue', id: 1 } } },
                    KeyValueList: { fields: { values: { rule: 'repeated', type: 'KeyValue', id: 1 } } },
                    KeyValue: KEY_VALUE,
                    InstrumentationScope: {
                      fields: { name: { type: 'string', id: 1 }, version: { type: 'string', id: 2 }, attributes: { rule: 'repeated', type: 'KeyValue', id: 3 }, droppedAttributesCount: { type: 'uint32', id: 4 } },
                    },
                  },
                },
              },
            },
            resource: {
              nested: {
                v1: {
                  nested: {
                    Resource: { fields: { attributes: { rule: 'repeated', type: 'opentelemetry.proto.common.v1.KeyValue', id: 1 }, droppedAttributesCount: { type: 'uint32', id: 2 } } },
                  },
                },
              },
            },
            trace: {
              nested: {
                v1: {
                  nested: {
                    ResourceSpans: {
                      fields: { resource: { type: 'opentelemetry.proto.resource.v1.Resource', id: 1 }, scopeSpans: { rule: 'repeated', type: 'ScopeSpans', id: 2 }, schemaUrl: { type: 'string', id: 3 } },
                    },
                    ScopeSpans: {
                      fields: { scope: { type: 'opentelemetry.proto.common.v1.InstrumentationScope', id: 1 }, spans: { rule: 'repeated', type: 'Span', id: 2 }, schemaUrl: { type: 'string', id: 3 } },
                    },
                    Span: {
                      fields: {
                        traceId: { type: 'bytes', id: 1 },
                        spanId: { type: 'bytes', id: 2 },
                        traceState: { type: 'string', id: 3 },
                        parentSpanId: { type: 'bytes', id: 4 },
                        flags: { type: 'fixed32', id: 16 },
                        name: { type: 'string', id: 5 },
                        kind: { type: 'int32', id: 6 },
                        startTimeUnixNano: { type: 'fixed64', id: 7 },
                        endTimeUnixNano: { type: 'fixed64', id: 8 },
                        attributes: { rule: 'repeated', type: 'opentelemetry.proto.common.v1.KeyValue', id: 9 },
                        droppedAttributesCount: { type: 'uint32', id: 10 },
                        status: { type: 'Status', id: 15 },
                      },
                    },
                    Status: { fields: { message: { type: 'string', id: 2 }, code: { type: 'int32', id: 3 } } },
                  },
                },
              },
            },
            collector: {
              nested: {
                trace: {
                  nested: {
                    v1: {
                      nested: {
                        ExportTraceServiceRequest: { fields: { resourceSpans: { rule: 'repeated', type: 'opentelemetry.proto.trace.v1.ResourceSpans', id: 1 } } },
                        ExportTraceServiceResponse: { fields: { partialSuccess: { type: 'ExportTracePartialSuccess', id: 1 } } },
                        ExportTracePartialSuccess: { fields: { rejectedSpans: { type: 'int64', id: 1 }, errorMessage: { type: 'string', id: 2 } } },
                      },
                    },
                  },
                },
              },
            },
          },
        },
      },
    },
  },
};

export const OTLP_EXPORT_METHOD = '/opentelemetry.proto.collector.trace.v1.TraceService/Export';

/** SpanKind and StatusCode values. */
export const OTLP_KIND = { SERVER: 2, CLIENT: 3 } as const;
export const OTLP_STATUS = { UNSET: 0, OK: 1, ERROR: 2 } as const;

let root: protobuf.Root | undefined;

export function otlpType(name: 'ExportTraceServiceRequest' | 'ExportTraceServiceResponse'): protobuf.Type {
  root ??= protobufjs().Root.fromJSON(DESCRIPTOR as protobuf.INamespace);
  return root.lookupType(`opentelemetry.proto.collector.trace.v1.${name}`);
}

/** A 64-bit unsigned value (nanoseconds since the epoch) as protobufjs writes it without long.js. */
export function fixed64(value: bigint): { low: number; high: number } {
  return { low: Number(value & 0xffffffffn), high: Number((value >> 32n) & 0xffffffffn) };
}
