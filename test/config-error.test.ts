import assert from 'node:assert/strict';
import { deserialize, serialize } from 'node:v8';
import { describe, it } from 'node:test';
import { ConfigError, configError, errorText, reviveConfigErrors } from '../shared/config/config-error.js';

/** Configuration errors: a code, a field path and a source beside the text operators read. */

describe('configuration errors', () => {
  it('print as <source>: <path>: <detail>, a root path without its leading dot', () => {
    const e = configError('unknown_reference', '.static_resources.clusters[0].name', "unknown cluster 'x'");
    assert.equal(e.path, 'static_resources.clusters[0].name');
    assert.equal(e.text, "static_resources.clusters[0].name: unknown cluster 'x'");
    assert.equal(e.from('b.yaml').text, "b.yaml: static_resources.clusters[0].name: unknown cluster 'x'");
    assert.equal(configError('parse', '', 'unable to parse YAML').from('--config-yaml').text, '--config-yaml: unable to parse YAML');
    assert.equal(errorText([e, 'a socket that would not bind']), `${e.text}; a socket that would not bind`);
  });

  it('move inside an outer path: a resource\'s place in a response', () => {
    assert.equal(configError('invalid_value', 'name', 'x').within('resources[2]').path, 'resources[2].name');
    assert.equal(configError('invalid_value', '[0]', 'x').within('resources[2]').path, 'resources[2][0]');
    assert.equal(configError('missing', '', 'x').within('resources[2]').path, 'resources[2]');
    assert.equal(configError('missing', '<root>', 'x').within('resources[2]').path, 'resources[2]');
  });

  it('come back whole from a structured clone (a hot restart parent reads for its child)', () => {
    const before = [new ConfigError('constraint', 'admin.address', 'value is required', 'b.yaml')];
    const cloned = deserialize(serialize(before)) as ConfigError[];
    assert.equal(cloned[0] instanceof ConfigError, false, 'the clone loses the class');
    assert.deepEqual(reviveConfigErrors(cloned), before);
    assert.equal(reviveConfigErrors(cloned)[0]!.text, 'b.yaml: admin.address: value is required');
  });
});
