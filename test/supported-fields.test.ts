import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import protobuf from 'protobufjs';
import { EXTENSIONS } from '../shared/extensions/registry.js';
import { IMPLEMENTED_WHOLE } from '../shared/config/implemented-whole.js';
import { envoySchema } from '../shared/config/schema.js';
import { implementedInPart, supportedFields } from '../shared/config/supported.js';
import { filterBootstrap, loadErrors } from './helpers/bootstraps.js';

/**
 * Every message a configuration can reach (from the resources and every extension config this
 * proxy implements, through the fields it implements) says which of its fields are implemented:
 * a field Envoy's API has, or adds at the next refresh, and the proxy does not do is refused by
 * name, never accepted and ignored.
 */

const ROOTS = [
  'envoy.config.bootstrap.v3.Bootstrap',
  'envoy.config.cluster.v3.Cluster',
  'envoy.config.endpoint.v3.ClusterLoadAssignment',
  'envoy.config.listener.v3.Listener',
  'envoy.config.route.v3.RouteConfiguration',
  ...EXTENSIONS.flatMap((e) => [e.typeName, ...(e.perRouteTypeName ? [e.perRouteTypeName] : [])]),
];

/** The messages reachable through implemented fields, and those of them that no list covers. */
function reachable(): { types: Set<string>; uncovered: string[] } {
  const schema = envoySchema();
  const types = new Set<string>();
  const uncovered: string[] = [];
  const visit = (t: protobuf.Type) => {
    const name = t.fullName.slice(1);
    if (types.has(name) || name.startsWith('google.protobuf.')) return;
    types.add(name);
    const fields = supportedFields(name);
    if (!fields) uncovered.push(name);
    for (const f of t.fieldsArray) {
      if (fields && !fields.has(f.name)) continue;
      f.resolve();
      if (f.resolvedType instanceof protobuf.Type) visit(f.resolvedType);
    }
  };
  for (const r of ROOTS) visit(schema.lookupType(r));
  return { types, uncovered };
}

describe('the fields this proxy implements', () => {
  it('are listed for every message a configuration can reach, implemented in part (supported.ts) or whole (implemented-whole.ts)', () => {
    const { uncovered } = reachable();
    assert.deepEqual(uncovered, [], 'list these messages in supported.ts (the fields implemented) or, once every field is built, in implemented-whole.ts');
  });

  it('name only fields the API has, and no message in both lists', () => {
    const schema = envoySchema();
    for (const [name, fields] of Object.entries(IMPLEMENTED_WHOLE)) {
      const type = schema.lookupType(name);
      for (const f of fields) assert.ok(type.fields[f], `${name}.${f} is not a field of the API`);
      assert.ok(!implementedInPart(name), `${name} is in both lists`);
    }
  });

  it('refuse, by name, a field the current API added to a message otherwise implemented whole', () => {
    const config = (typed: object) => filterBootstrap('t', [{ name: 'envoy.filters.http.header_to_metadata', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.header_to_metadata.v3.Config', ...typed } }], [{ match: { prefix: '/' }, route: { cluster: 'backend' } }], 1);
    const rules = { request_rules: [{ header: 'x-a', on_header_present: { key: 'a' } }] };
    assert.deepEqual(loadErrors(config(rules)), []);
    assert.match(loadErrors(config({ ...rules, stat_prefix: 'h2m' })).join('\n'), /typed_config\.stat_prefix: field 'stat_prefix' of envoy\.extensions\.filters\.http\.header_to_metadata\.v3\.Config is not supported by this proxy/);
  });
});
