import assert from 'node:assert/strict';
import { test } from 'node:test';
import { requestId } from '../worker/http/request-id.js';

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

test('a generated x-request-id is a version-4 UUID, and none repeats across refills of the random batch', () => {
  const seen = new Set<string>();
  // 1,000 spans several batches of 128.
  for (let i = 0; i < 1000; i++) {
    const id = requestId();
    assert.match(id, UUID_V4);
    seen.add(id);
  }
  assert.equal(seen.size, 1000);
});

test('every hex digit position varies (no digit is left from the template)', () => {
  const ids = Array.from({ length: 1024 }, () => requestId());
  for (let at = 0; at < 36; at++) {
    if ([8, 13, 18, 23].includes(at)) continue;
    const digits = new Set(ids.map((id) => id[at]));
    // The version digit is always 4; the variant digit one of four; the others any of sixteen.
    const expected = at === 14 ? 1 : at === 19 ? 4 : 16;
    assert.equal(digits.size, expected, `position ${at}`);
  }
});
