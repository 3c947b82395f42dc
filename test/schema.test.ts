import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import protobuf from 'protobufjs';
import { BOOTSTRAP_TYPE } from '../shared/config/bootstrap.js';
import { envoySchema, loadSchemaFromProtos, materialisingOnLookup, readSchemaCache, v3Successors } from '../shared/config/schema.js';

/**
 * The schema the build writes (dist/envoy-schema.json) is read a unit at a time: a lookup builds
 * the messages it reaches, and nothing else (shared/config/schema.ts).
 */
const cache = readSchemaCache();

function builtTypes(ns: protobuf.NamespaceBase, out: string[] = []): string[] {
  for (const object of ns.nestedArray) {
    if (object instanceof protobuf.Type) out.push(object.fullName);
    if (object instanceof protobuf.Namespace) builtTypes(object, out);
  }
  return out;
}

describe('the API schema, built on lookup', () => {
  it('is in the build', () => {
    assert.ok(cache, 'npm test builds dist/envoy-schema.json first');
    assert.ok(Object.keys(cache.units).length > 400);
  });

  it('builds what a lookup reaches and no more', () => {
    const root = materialisingOnLookup(cache!);
    assert.equal(builtTypes(root).length, 0);
    const bootstrap = root.lookupType(BOOTSTRAP_TYPE);
    bootstrap.resolveAll();
    const built = builtTypes(root);
    assert.ok(built.includes('.envoy.config.cluster.v3.Cluster'));
    assert.ok(!built.includes('.envoy.admin.v3.ConfigDump'), 'the admin messages are not reached from a bootstrap');
    assert.ok(built.length < 400, `${built.length} messages built for a bootstrap`);
    // A message nested in another is found by its own full name.
    assert.equal(materialisingOnLookup(cache!).lookupType('envoy.config.route.v3.RouteAction.HashPolicy').name, 'HashPolicy');
    assert.throws(() => root.lookupType('envoy.no.such.Message'), /no such type/);
  });

  it('gives every message of the API, each as the .proto files define it', () => {
    const lazy = materialisingOnLookup(cache!);
    const full = loadSchemaFromProtos();
    const names = builtTypes(full).map((n) => n.slice(1));
    assert.ok(names.length > 650);
    for (const name of names) {
      const built = lazy.lookupType(name);
      const want = full.lookupType(name);
      // The descriptor options' extensions (validate's and udpa's annotations) are not kept: their
      // values are in each field's and message's options already.
      const fields = (t: protobuf.Type) => t.fieldsArray.filter((f) => !f.declaringField).map((f) => [f.name, f.id, f.repeated, f.map, f.options]);
      assert.deepEqual(fields(built), fields(want), name);
      assert.deepEqual(built.oneofsArray.map((o) => [o.name, o.oneof]), want.oneofsArray.map((o) => [o.name, o.oneof]), name);
      assert.deepEqual(built.options, want.options, name);
    }
    // Every field's type is there to resolve.
    lazy.resolveAll();
    for (const name of names) {
      for (const field of lazy.lookupType(name).fieldsArray) {
        if (field.declaringField) continue;
        const want = full.lookupType(name).fields[field.name]!;
        assert.equal(field.resolvedType?.fullName, want.resolvedType?.fullName, `${name}.${field.name}`);
      }
    }
  });

  it("keeps the v2 names' successors for the v2 bootstrap upgrade", () => {
    envoySchema();
    assert.equal(v3Successors().get('envoy.config.filter.network.http_connection_manager.v2.HttpConnectionManager'), 'envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager');
    assert.equal(v3Successors().get('envoy.api.v2.Cluster'), 'envoy.config.cluster.v3.Cluster');
  });
});
