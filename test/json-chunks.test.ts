import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { redact, redactingReplacer } from '../admin/endpoints/config-dump.js';
import { jsonChunks } from '../admin/render/json-chunks.js';

const whole = (value: unknown, replacer?: Parameters<typeof jsonChunks>[1]) => [...jsonChunks(value, replacer)].join('');

describe('JSON written in chunks (large admin responses)', () => {
  it('is byte for byte JSON.stringify(value, null, 1), whatever the value', () => {
    const values: unknown[] = [
      {}, [], 5, 'text', null, true,
      { a: 1, b: [1, 2, { c: 'two\nlines' }], d: undefined, e: () => 1, f: null, g: { h: [], i: {} } },
      [undefined, () => 1, 'x', [[[[[1]]]]]],
      { at: new Date(0), deep: { a: { b: { c: { d: { e: [1, { f: 'g' }] } } } } } },
      { configs: [{ '@type': 't', static_clusters: Array.from({ length: 3000 }, (_, i) => ({ cluster: { name: `c${i}`, nested: { deep: [1, { x: [i] }] } }, last_updated: 'x' })) }] },
    ];
    for (const v of values) assert.equal(whole(v), JSON.stringify(v, null, 1));
  });

  it('comes in pieces of about 64 KiB', () => {
    const big = { cluster_statuses: Array.from({ length: 5000 }, (_, i) => ({ name: `service_${i}`, host_statuses: [{ address: { socket_address: { address: '10.0.0.1', port_value: i } } }] })) };
    // As deep as /config_dump's bootstrap clusters: configs[0].bootstrap.static_resources.clusters[].
    const deep = { configs: [{ '@type': 'b', bootstrap: { static_resources: { clusters: big.cluster_statuses } } }] };
    for (const value of [big, deep]) {
      const chunks = [...jsonChunks(value)];
      assert.ok(chunks.length > 5, `${chunks.length} chunks`);
      for (const c of chunks.slice(0, -1)) assert.ok(c.length > 64 * 1024 && c.length < 80 * 1024, `a chunk of ${c.length}`);
      assert.equal(chunks.join(''), JSON.stringify(value, null, 1));
    }
  });

  it("redacts on the way as /config_dump's redact() does to a copy", () => {
    const dump = { configs: [{ a: { b: { c: { d: { password: 'x', e: { private_key: { inline_string: 's' } }, keep: 'me' } } } }, password: ['a', { b: 'c' }], n: 1 }] };
    assert.equal(whole(dump, redactingReplacer), JSON.stringify(redact(dump), null, 1));
    assert.doesNotMatch(whole(dump, redactingReplacer), /"s"|"x"/);
  });
});
