// Envoy's constraint annotations (protoc-gen-validate) as its loader enforces them, read whole:
// every rule kind the API uses is one shared/config/pgv.ts evaluates; a repeated `in` keeps all
// of its values; an empty bound (`gt: {}`, `gte: {}`) is zero, so `connect_timeout: 0s` and
// `-1s` are refused as Envoy refuses them.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import protobuf from 'protobufjs';
import { BootstrapError, loadBootstrap } from '../shared/config/bootstrap.js';
import { fieldRules } from '../shared/config/pgv.js';
import { loadSchemaFromProtos } from '../shared/config/schema.js';
import { bootstrapSource, HCM_TYPE, minimalBootstrap, staticCluster } from './helpers/bootstraps.js';

/** The rules pgv.ts evaluates, by kind (a repeated field's item rules and a map's key rules are these too). */
const IMPLEMENTED: Record<string, string[]> = {
  string: ['min_len', 'max_len', 'min_bytes', 'max_bytes', 'prefix', 'in', 'not_in', 'pattern', 'well_known_regex', 'strict', 'ignore_empty'],
  bytes: ['min_len', 'max_len'],
  bool: ['const'],
  enum: ['defined_only', 'in', 'not_in'],
  duration: ['gt', 'gte', 'lt', 'lte', 'required'],
  message: ['required'],
  any: ['required'],
  repeated: ['min_items', 'max_items', 'unique'],
  map: ['min_pairs', 'max_pairs'],
  ...Object.fromEntries(['int32', 'int64', 'uint32', 'uint64', 'sint32', 'sint64', 'fixed32', 'fixed64', 'sfixed32', 'sfixed64', 'double', 'float'].map((k) => [k, ['const', 'gt', 'gte', 'lt', 'lte', 'in', 'not_in']])),
};

function errorsOf(doc: object): string[] {
  try {
    loadBootstrap(bootstrapSource({ configYaml: JSON.stringify(doc) }));
  } catch (err) {
    assert.ok(err instanceof BootstrapError, String(err));
    return err.errors;
  }
  return [];
}

function withCluster(over: object): object {
  const doc = minimalBootstrap() as { static_resources: { clusters: object[] } };
  doc.static_resources.clusters = [{ ...staticCluster('backend', 8080), ...over }];
  return doc;
}

describe('PGV rules', () => {
  it('every rule the API uses is one the loader evaluates', () => {
    const root = loadSchemaFromProtos();
    const unknown = new Set<string>();
    const walk = (ns: protobuf.NamespaceBase) => {
      for (const o of ns.nestedArray) {
        if (o instanceof protobuf.Type) {
          for (const f of o.fieldsArray) {
            for (const key of Object.keys(fieldRules(f) ?? {})) {
              // repeated.items.<kind>.<rule>, map.keys.<kind>.<rule>, <kind>.<rule>[.seconds|.nanos]
              const parts = key.replace(/^(repeated\.items|map\.keys|map\.values)\./, '').split('.');
              const [kind, rule] = parts;
              if (!IMPLEMENTED[kind!]?.includes(rule!)) unknown.add(`${o.fullName}.${f.name}: ${key}`);
            }
          }
        }
        if (o instanceof protobuf.Namespace) walk(o);
      }
    };
    walk(root);
    assert.deepEqual([...unknown], []);
  });

  it('keeps every value of a repeated `in`: any of Envoy\'s response flags is accepted, and the message lists them all', () => {
    const doc = minimalBootstrap() as { static_resources: { listeners: { filter_chains: { filters: { typed_config: Record<string, unknown> }[] }[] }[] } };
    const hcm = doc.static_resources.listeners[0]!.filter_chains[0]!.filters[0]!.typed_config;
    assert.equal(hcm['@type'], HCM_TYPE);
    const log = (flags: string[]) => [{ name: 'envoy.access_loggers.stdout', filter: { response_flag_filter: { flags } }, typed_config: { '@type': 'type.googleapis.com/envoy.extensions.access_loggers.stream.v3.StdoutAccessLog' } }];
    hcm.access_log = log(['UF', 'URX', 'DR']);
    assert.deepEqual(errorsOf(doc), []);
    hcm.access_log = log(['UF', 'XX']);
    const errors = errorsOf(doc);
    assert.equal(errors.length, 1, errors.join('\n'));
    assert.match(errors[0]!, /flags: \[1\]: value must be in list \[LH, UH, UT, .*, DR\]/);
  });

  it('reads an empty bound as zero: connect_timeout 0s and -1s are refused, a millisecond passes', () => {
    assert.deepEqual(errorsOf(withCluster({ connect_timeout: '0.001s' })), []);
    for (const bad of ['0s', '-1s']) {
      const errors = errorsOf(withCluster({ connect_timeout: bad }));
      assert.ok(errors.some((e) => /connect_timeout: value must be greater than 0s/.test(e)), `${bad}: ${errors.join('\n')}`);
    }
    // gte: {} (not negative): request_headers_timeout 0s passes, -1s does not.
    const hcmWith = (timeout: string) => {
      const doc = minimalBootstrap() as { static_resources: { listeners: { filter_chains: { filters: { typed_config: Record<string, unknown> }[] }[] }[] } };
      doc.static_resources.listeners[0]!.filter_chains[0]!.filters[0]!.typed_config.request_headers_timeout = timeout;
      return doc;
    };
    assert.deepEqual(errorsOf(hcmWith('0s')), []);
    assert.ok(errorsOf(hcmWith('-1s')).some((e) => /request_headers_timeout: value must be greater than or equal to 0s/.test(e)));
  });

  it('checks a string `in` and an enum `not_in`', () => {
    const doc = minimalBootstrap() as { static_resources: { listeners: { filter_chains: { filters: { typed_config: Record<string, unknown> }[] }[] }[] } };
    const hcm = doc.static_resources.listeners[0]!.filter_chains[0]!.filters[0]!.typed_config;
    hcm.scheme_header_transformation = { scheme_to_overwrite: 'https' };
    assert.deepEqual(errorsOf(doc), []);
    hcm.scheme_header_transformation = { scheme_to_overwrite: 'ftp' };
    assert.ok(errorsOf(doc).some((e) => /scheme_to_overwrite: value must be in list \[http, https\]/.test(e)));
    const san = (type: string) =>
      errorsOf(withCluster({
        transport_socket: {
          name: 'envoy.transport_sockets.tls',
          typed_config: { '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext', common_tls_context: { validation_context: { match_typed_subject_alt_names: [{ san_type: type, matcher: { exact: 'backend' } }] } } },
        },
      })).filter((e) => e.includes('san_type'));
    assert.deepEqual(san('DNS'), []);
    assert.match(san('SAN_TYPE_UNSPECIFIED').join('\n'), /san_type: value must not be in list \[0\]/);
  });
});
