// Envoy's constraint annotations (protoc-gen-validate) as its loader enforces them, read whole:
// every rule kind the API uses is one shared/config/pgv.ts evaluates; a repeated `in` keeps all
// of its values; an empty bound (`gt: {}`, `gte: {}`) is zero, so `connect_timeout: 0s` and
// `-1s` are refused as Envoy refuses them.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import protobuf from 'protobufjs';
import { checkFieldRules, fieldRules } from '../shared/config/pgv.js';
import { loadSchemaFromProtos } from '../shared/config/schema.js';
import { HCM_TYPE, loadErrors, minimalBootstrap, staticCluster } from './helpers/bootstraps.js';
import type { ConfigError } from '../shared/config/config-error.js';

/** The rules pgv.ts evaluates, by kind (a repeated field's item rules and a map's key rules are these too). */
const IMPLEMENTED: Record<string, string[]> = {
  string: ['min_len', 'max_len', 'min_bytes', 'max_bytes', 'prefix', 'suffix', 'in', 'not_in', 'pattern', 'well_known_regex', 'strict', 'ignore_empty'],
  bytes: ['min_len', 'max_len'],
  bool: ['const'],
  enum: ['defined_only', 'in', 'not_in'],
  duration: ['gt', 'gte', 'lt', 'lte', 'required'],
  message: ['required', 'skip'],
  any: ['required'],
  repeated: ['min_items', 'max_items', 'unique'],
  map: ['min_pairs', 'max_pairs'],
  ...Object.fromEntries(['int32', 'int64', 'uint32', 'uint64', 'sint32', 'sint64', 'fixed32', 'fixed64', 'sfixed32', 'sfixed64', 'double', 'float'].map((k) => [k, ['const', 'gt', 'gte', 'lt', 'lte', 'in', 'not_in']])),
};

const errorsOf = loadErrors;

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
    assert.deepEqual(errors.map((e) => [e.code, e.path.replace(/^.*\.access_log/, 'access_log')]), [['constraint', 'access_log[0].filter.response_flag_filter.flags']], errors.join('\n'));
    // The message lists every value Envoy takes, as Envoy's does.
    assert.match(errors[0]!.detail, /^\[1\]: value must be in list \[LH, UH, UT, .*, DR, UDO\]/);
  });

  it('reads an empty bound as zero: connect_timeout 0s and -1s are refused, a millisecond passes', () => {
    assert.deepEqual(errorsOf(withCluster({ connect_timeout: '0.001s' })), []);
    for (const bad of ['0s', '-1s']) {
      const errors = errorsOf(withCluster({ connect_timeout: bad }));
      assert.ok(errors.some((e) => e.code === 'constraint' && e.path === 'static_resources.clusters[0].connect_timeout'), `${bad}: ${errors.join('\n')}`);
    }
    // gte: {} (not negative): request_headers_timeout 0s passes, -1s does not.
    const hcmWith = (timeout: string) => {
      const doc = minimalBootstrap() as { static_resources: { listeners: { filter_chains: { filters: { typed_config: Record<string, unknown> }[] }[] }[] } };
      doc.static_resources.listeners[0]!.filter_chains[0]!.filters[0]!.typed_config.request_headers_timeout = timeout;
      return doc;
    };
    assert.deepEqual(errorsOf(hcmWith('0s')), []);
    assert.ok(errorsOf(hcmWith('-1s')).some((e) => e.code === 'constraint' && e.path.endsWith('.typed_config.request_headers_timeout')));
  });

  it('checks a string `in` and an enum `not_in`', () => {
    const doc = minimalBootstrap() as { static_resources: { listeners: { filter_chains: { filters: { typed_config: Record<string, unknown> }[] }[] }[] } };
    const hcm = doc.static_resources.listeners[0]!.filter_chains[0]!.filters[0]!.typed_config;
    hcm.scheme_header_transformation = { scheme_to_overwrite: 'https' };
    assert.deepEqual(errorsOf(doc), []);
    hcm.scheme_header_transformation = { scheme_to_overwrite: 'ftp' };
    assert.ok(errorsOf(doc).some((e) => e.code === 'constraint' && e.path.endsWith('.scheme_header_transformation.scheme_to_overwrite')));
    const san = (type: string) =>
      errorsOf(withCluster({
        transport_socket: {
          name: 'envoy.transport_sockets.tls',
          typed_config: { '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext', common_tls_context: { validation_context: { match_typed_subject_alt_names: [{ san_type: type, matcher: { exact: 'backend' } }] } } },
        },
      })).filter((e) => e.path.endsWith('.san_type'));
    assert.deepEqual(san('DNS'), []);
    assert.deepEqual(san('SAN_TYPE_UNSPECIFIED').map((e) => e.code), ['constraint']);
  });
});

describe('each PGV rule kind, one value that passes and one that fails', () => {
  const root = protobuf.Root.fromJSON({
    nested: {
      google: { nested: { protobuf: { nested: { Duration: { fields: { seconds: { type: 'int64', id: 1 }, nanos: { type: 'int32', id: 2 } } } } } } },
      t: { nested: { Color: { values: { UNSET: 0, RED: 1, BLUE: 2 } }, M: { fields: { x: { type: 'int32', id: 1 } } }, H: { fields: {} } } },
    },
  });
  /** A field of `type` with these rules (as the loader's options are: `(validate.rules).` keys), resolved in `root`. */
  const fieldWith = (type: string, rules: Record<string, unknown>, rule?: 'repeated' | 'map'): protobuf.Field => {
    const options = Object.fromEntries(Object.entries(rules).map(([k, v]) => [`(validate.rules).${k}`, v]));
    const f = rule === 'map' ? (new protobuf.MapField('f', 1, 'string', type, options) as unknown as protobuf.Field) : new protobuf.Field('f', 1, type, rule === 'repeated' ? 'repeated' : undefined, undefined, options);
    const holder = root.lookupType('t.H');
    holder.add(f);
    f.resolve();
    holder.remove(f);
    return f;
  };
  const errors = (f: protobuf.Field, value: unknown, enumNumber?: number | number[]) => {
    const out: ConfigError[] = [];
    checkFieldRules(f, value, enumNumber, 'f', out);
    return out;
  };
  // [rules, type, passes, fails, the failure's message (null: none to try), rule?]
  const cases: [Record<string, unknown>, string, unknown, unknown, RegExp | null, ('repeated' | 'map')?][] = [
    [{ 'string.min_len': 1 }, 'string', 'a', '', /at least 1 characters/],
    [{ 'string.max_bytes': 3 }, 'string', 'abc', 'abcd', /at most 3 bytes/],
    [{ 'string.in': ['http', 'https'] }, 'string', 'https', 'ftp', /must be in list \[http, https\]/],
    [{ 'string.not_in': ['x', 'y'] }, 'string', 'z', 'y', /must not be in list \[x, y\]/],
    [{ 'string.prefix': '/' }, 'string', '/a', 'a', /does not have prefix/],
    [{ 'string.suffix': '.lua' }, 'string', 'a.lua', 'a.py', /does not have suffix "\.lua"/],
    [{ 'string.pattern': '^[a-z]+$' }, 'string', 'abc', 'ab1', /does not match regex pattern/],
    [{ 'string.well_known_regex': 'HTTP_HEADER_NAME', 'string.strict': false }, 'string', 'x-a', 'x\na', /valid HTTP header name/],
    [{ 'string.min_len': 1, 'string.ignore_empty': true }, 'string', '', undefined, null],
    [{ 'bool.const': true }, 'bool', true, false, /must equal true/],
    [{ 'bytes.min_len': 2 }, 'bytes', Buffer.from('ab').toString('base64'), Buffer.from('a').toString('base64'), /at least 2 bytes/],
    [{ 'bytes.max_len': 1 }, 'bytes', Buffer.from('a').toString('base64'), Buffer.from('ab').toString('base64'), /at most 1 bytes/],
    [{ 'uint32.gt': 0 }, 'uint32', 1, 0, /greater than 0/],
    [{ 'uint32.gte': 1, 'uint32.lte': 5 }, 'uint32', 5, 6, /inside range \[1, 5\]/],
    [{ 'uint32.lt': 10 }, 'uint32', 9, 10, /less than 10/],
    [{ 'int32.gt': -1 }, 'int32', 0, -1, /greater than -1/],
    [{ 'uint64.lte': 100 }, 'uint64', 100, 101, /less than or equal to 100/],
    [{ 'double.gte': 0 }, 'double', 0, -0.5, /greater than or equal to 0/],
    [{ 'double.gt': 0 }, 'double', 0.1, 0, /greater than 0/],
    [{ 'duration.gt': {} }, 'google.protobuf.Duration', '0.001s', '0s', /greater than 0s/],
    [{ 'duration.gte': {} }, 'google.protobuf.Duration', '0s', '-1s', /greater than or equal to 0s/],
    [{ 'duration.lte': {} }, 'google.protobuf.Duration', '0s', '1s', /less than or equal to 0s/],
    [{ 'duration.gte.nanos': 1000000 }, 'google.protobuf.Duration', '0.001s', '0.0001s', /greater than or equal to 0\.001s/],
    [{ 'duration.lt.seconds': 10 }, 'google.protobuf.Duration', '9s', '10s', /less than 10s/],
    [{ 'duration.required': true }, 'google.protobuf.Duration', '1s', undefined, /required/],
    [{ 'message.required': true }, 't.M', { x: 1 }, undefined, /required/],
    [{ 'repeated.min_items': 1 }, 'string', ['a'], undefined, /at least 1 item/, 'repeated'],
    [{ 'repeated.max_items': 1 }, 'string', ['a'], ['a', 'b'], /no more than 1 item/, 'repeated'],
    [{ 'repeated.unique': true }, 'string', ['a', 'b'], ['a', 'a'], /unique items/, 'repeated'],
    [{ 'repeated.items.string.min_len': 1 }, 'string', ['a'], ['a', ''], /\[1\]: value length must be at least 1/, 'repeated'],
    [{ 'repeated.items.uint32.lt': 3 }, 'uint32', [2], [3], /\[0\]: value must be less than 3/, 'repeated'],
    [{ 'map.min_pairs': 1 }, 'string', { a: 'b' }, {}, /at least 1 pair/, 'map'],
    [{ 'map.keys.string.min_len': 2 }, 'string', { ab: 'x' }, { a: 'x' }, /map key 'a': value length must be at least 2/, 'map'],
  ];
  for (const [rules, type, passes, fails, message, rule] of cases) {
    it(`${Object.keys(rules).join(' + ')}${rule ? ` (${rule})` : ''}`, () => {
      const f = fieldWith(type, rules, rule);
      assert.deepEqual(errors(f, passes), [], `passes: ${JSON.stringify(passes)}`);
      if (message === null) return;
      assert.match(errors(f, fails).join('\n'), message, `fails: ${JSON.stringify(fails)}`);
    });
  }
  it('enum.defined_only, enum.in, enum.not_in (by number; an unset enum is 0)', () => {
    const f = fieldWith('t.Color', { 'enum.defined_only': true, 'enum.not_in': [0] });
    assert.deepEqual(errors(f, 'RED', 1), []);
    assert.match(errors(f, 'UNSET', 0).join('\n'), /must not be in list \[0\]/);
    assert.match(errors(f, undefined).join('\n'), /must not be in list \[0\]/);
    assert.match(errors(f, 7, 7).join('\n'), /defined enum values/);
    const g = fieldWith('t.Color', { 'enum.in': [1, 2] });
    assert.deepEqual(errors(g, 'BLUE', 2), []);
    assert.match(errors(g, 'UNSET', 0).join('\n'), /must be in list \[1, 2\]/);
  });
});
