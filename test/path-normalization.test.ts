import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { canonicalPath, mergeSlashes, normalizePath, unescapeSlashes, type PathNormalization } from '../shared/http/path-normalization.js';

/** The connection manager's path normalization, with the vectors of Envoy's path_utility_test and conn_manager_utility_test. */

describe('canonicalPath (normalize_path)', () => {
  const cases: [string, string | undefined][] = [
    ['/xyz', '/xyz'],
    ['/x/y/z', '/x/y/z'],
    ['/xyz/.%00../abc', undefined],
    ['/xyz/%00.%00./abc', undefined],
    ['/xyz/AAAAA%%0000/abc', undefined],
    ['/ab\u0000c', undefined],
    ['/a/b/../c', '/a/c'],
    ['/a/b/./c', '/a/b/c'],
    ['a/b/../c', '/a/c'],
    ['/a/b/../../../../c', '/c'],
    ['/a/..\\c', '/c'],
    ['/%c0%af', '/%c0%af'],
    ['/%5c%25', '/%5c%25'],
    ['/a/b/%2E%2E/c', '/a/c'],
    ['/a/b/%2e%2e/c', '/a/c'],
    ['/A/B/C', '/A/B/C'],
    ['/a/%2F%2f/c', '/a/%2F%2f/c'],
    ['/xyz/..;foo=bar/abc', '/abc'],
    ['/..;foo=bar/abc', '/abc'],
    ['/xyz/..;foo=bar', '/'],
    ['/xyz/.;foo=bar/abc', '/xyz/abc'],
    ['/.;foo=bar/abc', '/abc'],
    ['/xyz/.;foo=bar', '/xyz/'],
    ['/xyz/..;foo=bar/.;v1=2,v2=3/abc', '/abc'],
    ['/..;foo=bar/abc/.;mmm', '/abc/'],
    ['/.;aaa/..;foo=bar/abc/.;mmm', '/abc/'],
    ['/xyz/..;foo=bar/.;fff=zzz?blah=woops', '/?blah=woops'],
    ['/xyz/..;foo=bar/.;fff=zzz/remain;blah-bluh?query', '/remain;blah-bluh?query'],
    ['/xyz/...;foo', '/xyz/...;foo'],
    ['/path\\with%5Cback%5Cslashes', '/path/with%5Cback%5Cslashes'],
    ['/path/with%3bmixed%5Ccase%Fesequences', '/path/with%3bmixed%5Ccase%Fesequences'],
    ['/path/with/\u00a7_extended/\u00fe_ascii', '/path/with/%A7_extended/%FE_ascii'],
    ['/path/with/extended/ascii?in=que\u00b6ry', '/path/with/extended/ascii?in=que\u00b6ry'],
    ['/a%2Eb', '/a.b'],
    ['/%41%62%7e%2D%5F', '/Ab~-_'],
    ['/a%zzb', '/a%zzb'],
    ['/a b"c', '/a%20b%22c'],
    ['/..', '/'],
    ['/a/.', '/a/'],
    ['/a//../b', '/a/b'],
  ];
  for (const [input, output] of cases) it(`${JSON.stringify(input)} → ${output === undefined ? 'fails' : JSON.stringify(output)}`, () => assert.equal(canonicalPath(input), output));
});

describe('mergeSlashes and unescapeSlashes', () => {
  it("merges the path's runs of slashes, not the query's", () => {
    for (const [input, output] of [['', ''], ['a//b/c', 'a/b/c'], ['/a//b/c/', '/a/b/c/'], ['//a/b/c', '/a/b/c'], ['/a/b/c//', '/a/b/c/'], ['/a////b/c', '/a/b/c'], ['/a//b?a=///c', '/a/b?a=///c'], ['/a//b?', '/a/b?'], ['//a/?b', '/a/?b'], ['/a', '/a']]) {
      assert.equal(mergeSlashes(input!), output, input);
    }
  });

  it('unescapes %2F and %5C in the path only, once', () => {
    const cases: [string, string | undefined][] = [
      ['', undefined], ['%2f%2F', '//'], ['/a%2Fb%2fc/', '/a/b/c/'], ['%2b', undefined], ['%2', undefined], ['%', undefined], ['%%2fa/', '%/a/'], ['%2%2fa/', '%2/a/'],
      ['%5c%5C', '\\\\'], ['/a%5Cb%5cc/', '/a\\b\\c/'], ['/x/%2E%2e/z%2f%2Fabc%5C../def', '/x/%2E%2e/z//abc\\../def'],
      ['%2fa%5Cb%2fc%5c?%2fabcd%5C%%2f%', '/a\\b/c\\?%2fabcd%5C%%2f%'], ['/a%252Fb', undefined],
    ];
    for (const [input, output] of cases) assert.equal(unescapeSlashes(input), output, input);
  });
});

describe('normalizePath (maybeNormalizePath)', () => {
  const config = (over: Partial<PathNormalization>): PathNormalization => ({ normalize: false, mergeSlashes: false, escapedSlashes: 'KEEP_UNCHANGED', rejectFragment: true, ...over });
  const cases: [Partial<PathNormalization>, string, string, string?][] = [
    [{}, '/xyz/../a', 'continue', '/xyz/../a'],
    [{ normalize: true }, '/xyz/../abc', 'continue', '/abc'],
    [{ normalize: true }, '/xyz///abc', 'continue', '/xyz///abc'],
    [{ normalize: true, mergeSlashes: true }, '/xyz///abc', 'continue', '/xyz/abc'],
    [{ mergeSlashes: true }, '/xyz/..//abc', 'continue', '/xyz/../abc'],
    [{ escapedSlashes: 'KEEP_UNCHANGED' }, '/xyz%2fabc%5Cqrt', 'continue', '/xyz%2fabc%5Cqrt'],
    [{ escapedSlashes: 'REJECT_REQUEST' }, '/xyz%2F..//abc', 'reject'],
    [{ escapedSlashes: 'REJECT_REQUEST' }, '/xyz%5c..//abc', 'reject'],
    [{ escapedSlashes: 'REJECT_REQUEST' }, '/xyz%EA/abc', 'continue', '/xyz%EA/abc'],
    [{ escapedSlashes: 'UNESCAPE_AND_REDIRECT' }, '/xyz%2F../%5cabc', 'redirect', '/xyz/../\\abc'],
    [{ escapedSlashes: 'UNESCAPE_AND_REDIRECT' }, '/xyz%30..//abc', 'continue', '/xyz%30..//abc'],
    [{ escapedSlashes: 'UNESCAPE_AND_FORWARD' }, '/xyz%2F../%5Cabc', 'continue', '/xyz/../\\abc'],
    [{ normalize: true, escapedSlashes: 'UNESCAPE_AND_FORWARD' }, '/xyz%2f../%5Cabc', 'continue', '//abc'],
    [{ normalize: true, escapedSlashes: 'UNESCAPE_AND_REDIRECT' }, '/xyz%2f../%5Cabc%00', 'reject'],
    [{ mergeSlashes: true, escapedSlashes: 'UNESCAPE_AND_REDIRECT' }, '/xyz%2f/..//abc%5C%5c', 'redirect', '/xyz/../abc\\\\'],
    [{ normalize: true, mergeSlashes: true, escapedSlashes: 'UNESCAPE_AND_FORWARD' }, '/xyz%2f..%5c/%2Fabc', 'continue', '/abc'],
    [{ normalize: true, mergeSlashes: true, escapedSlashes: 'UNESCAPE_AND_REDIRECT' }, '/xyz%2f..%5c/%2Fabc', 'redirect', '/abc'],
    [{ normalize: true, mergeSlashes: true, escapedSlashes: 'UNESCAPE_AND_REDIRECT' }, '/abc%2f../%5cdef//', 'redirect', '/def/'],
    [{}, '/allow?p1=v1#seg', 'reject'],
    [{ rejectFragment: false }, '/allow?p1=v1#seg', 'continue', '/allow?p1=v1'],
  ];
  for (const [over, input, action, output] of cases) {
    it(`${JSON.stringify(over)} ${input} → ${action}${output ? ` ${output}` : ''}`, () => {
      const n = normalizePath(input, config(over));
      assert.equal(n.action, action);
      if (output !== undefined) assert.equal(n.path, output);
    });
  }
});
