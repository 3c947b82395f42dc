// Header values as shared/header-mutation.ts compiles them: a value without operators is a constant
// that reads no request, so that a route whose request mutations are all static is applied with no
// access-log entry made (readsEntry false); one with an operator, or any response mutation, reads it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AccessLogEntry } from '../shared/access-log/entry.js';
import { applyHeaderMutations, compileHeaderMutations, compileHeaderValue, type MutableHeaders } from '../shared/header-mutation.js';

const add = (key: string, value: string) => ({ header: { key, value } });

test('a value without operators is a constant (with %% as a literal percent sign); one with an operator is not', () => {
  assert.equal(compileHeaderValue('static').constant, 'static');
  assert.equal(compileHeaderValue('100%% sure').constant, '100% sure');
  assert.equal(compileHeaderValue('').constant, '');
  assert.equal(compileHeaderValue('%PROTOCOL%').constant, undefined);
  assert.equal(compileHeaderValue('a %% b %PROTOCOL%').constant, undefined);
});

test('static request mutations read no entry, and are applied without one', () => {
  const mutations = compileHeaderMutations({ request_headers_to_add: [add('x-static', 'one'), add('x-pct', '50%%')], request_headers_to_remove: ['x-gone'] }, {}, { request_headers_to_add: [add('x-static', 'two')] })!;
  assert.equal(mutations.readsEntry, false);
  const headers: MutableHeaders = { 'x-gone': 'bye', 'x-kept': 'yes' };
  applyHeaderMutations(headers, mutations.request, undefined);
  assert.deepEqual(headers, { 'x-kept': 'yes', 'x-static': ['one', 'two'], 'x-pct': '50%' });
});

test('an operator in a request value, or any response mutation, reads the entry', () => {
  const withOperator = compileHeaderMutations({ request_headers_to_add: [add('x-static', 'one'), add('x-proto', '%PROTOCOL%')] }, {}, {})!;
  assert.equal(withOperator.readsEntry, true);
  const headers: MutableHeaders = {};
  applyHeaderMutations(headers, withOperator.request, { protocol: 'HTTP/1.1' } as AccessLogEntry);
  assert.deepEqual(headers, { 'x-static': 'one', 'x-proto': 'HTTP/1.1' });
  assert.throws(() => applyHeaderMutations({}, withOperator.request, undefined), /without the request it reads/);
  const responseOnly = compileHeaderMutations({ response_headers_to_add: [add('x-static', 'one')] }, {}, {})!;
  assert.equal(responseOnly.readsEntry, true);
});
