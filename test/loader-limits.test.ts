import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { BootstrapError, loadBootstrap, type BootstrapSource } from '../shared/config/bootstrap.js';
import { documentLimitError, MAX_BYTES, MAX_DEPTH, MAX_VALUES } from '../shared/config/limits.js';
import { readMessage } from '../shared/config/message.js';
import { fuzzedBootstraps } from './helpers/bootstrap-fuzz.js';
import { runProxy, tempDir } from './helpers/cli.js';

/**
 * Hostile or broken bootstrap files: an alias bomb, nesting deeper than any reader's stack, and
 * garbage in every format each end as a configuration error (exit 1, one line per error, no stack
 * trace), with memory and time bounded. The fuzz run is seeded, so a failure replays.
 */

const tmp = tempDir('proxy-loader-');
after(() => tmp.cleanup());

const source = (over: Partial<BootstrapSource>): BootstrapSource => ({
  configPath: '', configYaml: '', bootstrapVersion: undefined, allowUnknownStaticFields: false, disableExtensions: [], serviceCluster: '', serviceNode: '', serviceZone: '', ...over,
});

/** A 527-byte "billion laughs": nine levels of ten aliases each, 10^9 values once expanded. */
function aliasBomb(): string {
  const lines = ['a0: &a0 [x, x, x, x, x, x, x, x, x, x]'];
  for (let i = 1; i < 9; i++) lines.push(`a${i}: &a${i} [${Array.from({ length: 10 }, () => `*a${i - 1}`).join(', ')}]`);
  return `${lines.join('\n')}\nnode: {id: *a8}\n`;
}

/** Varint and length-delimited field, to write binary protobuf deeper than protobufjs's encoder can. */
const varint = (n: number): number[] => (n < 0x80 ? [n] : [(n & 0x7f) | 0x80, ...varint(n >>> 7)]);
const field = (id: number, payload: Buffer): Buffer => Buffer.concat([Buffer.from(varint((id << 3) | 2)), Buffer.from(varint(payload.length)), payload]);

describe('loader limits', () => {
  it('measures aliases once but counts every use, and stops descending at the depth limit', () => {
    const shared = { a: [1, 2, 3] };
    assert.equal(documentLimitError({ x: shared, y: shared }), undefined);
    let deep: unknown = 1;
    for (let i = 0; i < MAX_DEPTH; i++) deep = { a: deep };
    assert.equal(documentLimitError(deep), undefined, 'exactly at the limit');
    deep = { a: deep };
    assert.match(documentLimitError(deep) ?? '', new RegExp(`^nested deeper than ${MAX_DEPTH} levels \\(at a\\.a\\.a\\.a\\.a\\.a…\\)$`));
    let wide: unknown = Array.from({ length: 1000 }, () => 0);
    for (let i = 0; i < 4; i++) wide = Array.from({ length: 10 }, () => wide);
    assert.equal(documentLimitError(wide), `has more than ${MAX_VALUES.toLocaleString('en-US')} values once its YAML aliases are expanded (a "billion laughs"?)`);
    // Without aliases, the limit is named for what it is.
    assert.equal(documentLimitError({ values: Array.from({ length: 2000 }, () => 0) }, 1000), 'has more than 1,000 values');
    // Few values, many bytes: a 1 MB string used 300 times.
    const big = 'x'.repeat(1024 * 1024);
    const many = { a: Array.from({ length: 300 }, () => ({ s: big })) };
    assert.equal(documentLimitError(many), `is larger than ${MAX_BYTES / (1024 * 1024)} MiB`);
    const shared1 = { s: big };
    assert.equal(documentLimitError({ a: Array.from({ length: 300 }, () => shared1) }), `is larger than ${MAX_BYTES / (1024 * 1024)} MiB once its YAML aliases are expanded (a "billion laughs"?)`);
    const loop: Record<string, unknown> = {};
    loop.self = [loop];
    assert.match(documentLimitError(loop) ?? '', /^a YAML alias refers to a value that contains it \(at self\[0\]\)$/);
  });

  const probes: [string, string | Uint8Array, RegExp][] = [
    ['bomb.yaml', aliasBomb(), /bomb\.yaml: refused: has more than 10,000,000 values once its YAML aliases are expanded/],
    // A 1 MB string referenced 10,000 times under node.metadata: 10 GB once expanded (it used to validate, then crash serve).
    ['strings.yaml', `s: &s "${'x'.repeat(1024 * 1024)}"\nnode:\n  metadata:\n    l: [${Array.from({ length: 10_000 }, () => '*s').join(', ')}]\n`, /strings\.yaml: refused: is larger than 256 MiB/],
    ['deep.json', `{"node": {"metadata": ${'{"a": '.repeat(100_000)}1${'}'.repeat(100_000)}}}`, /deep\.json: refused: nested deeper than 100 levels \(at node\.metadata\.a\.a\.a\.a…\)/],
    ['deep.yaml', `node: {metadata: ${'{a: '.repeat(20_000)}1${'}'.repeat(20_000)}}\n`, /deep\.yaml: unable to parse YAML: nesting exceeded maxDepth \(100\)/],
    ['deep.pb_text', `node { metadata { ${'fields { key: "a" value { struct_value { '.repeat(20_000)}${'} } } '.repeat(20_000)}} }\n`, /deep\.pb_text: unable to parse text proto: line 1: nested deeper than 100 levels/],
    ['garbage.pb_text', 'node { id: "x" \u0000\u00ff {{{ ::: ', /garbage\.pb_text: unable to parse text proto: line 1: unexpected character "\\u0000"/],
  ];
  // Struct → fields → Value → struct_value, 5,000 times: far past any stack protobufjs would need.
  let struct: Buffer = Buffer.alloc(0);
  for (let i = 0; i < 5000; i++) struct = field(1, Buffer.concat([field(1, Buffer.from('a')), field(2, field(5, struct))]));
  probes.push(['deep.pb', field(1, field(3, struct)), /deep\.pb: node\.metadata\.fields\["a"\]\.structValue.*…: refused: nested deeper than 100 levels/]);

  for (const [name, content, error] of probes) {
    it(`refuses ${name} with a configuration error: exit 1, no stack trace`, async () => {
      const out = await runProxy(['--mode', 'validate', '-c', tmp.file(name, content)]);
      assert.equal(out.code, 1, out.stderr);
      assert.match(out.stderr, error);
      assert.doesNotMatch(out.stderr, /^\s+at /m, 'no stack trace');
      assert.ok(out.stderr.length < 2000, `a short message, not ${out.stderr.length} bytes`);
    });
  }

  it('refuses an alias bomb in an admin request body too (POST /tap parses YAML)', () => {
    const got = readMessage('envoy.admin.v3.TapRequest', aliasBomb());
    assert.match(got.errors.join('\n'), /^refused: has more than 10,000,000 values once its YAML aliases are expanded/);
  });

  it('turns 1,000 seeded mutations of a bootstrap, in every format, into a bootstrap or a configuration error', () => {
    const tally = { loaded: 0, refused: 0 };
    for (const { index: i, ext, bytes } of fuzzedBootstraps(1000)) {
      const path = tmp.file(`fuzz.${ext}`, bytes);
      try {
        loadBootstrap(source({ configPath: path }));
        tally.loaded++;
      } catch (err) {
        assert.ok(err instanceof BootstrapError, `input ${i} (${ext}) threw ${(err as Error).stack}\n${bytes.toString('base64')}`);
        tally.refused++;
      }
    }
    assert.equal(tally.loaded + tally.refused, 1000);
    assert.ok(tally.refused > 0 && tally.loaded > 0, `both outcomes occur: ${JSON.stringify(tally)}`);
  });
});
