import assert from 'node:assert/strict';
import { STATUS_CODES } from 'node:http';
import { describe, it } from 'node:test';
import { REASON_PHRASES } from '../shared/http-status.js';

describe('reason phrases', () => {
  it("are node:http's, every one", () => {
    assert.deepEqual({ ...REASON_PHRASES }, { ...STATUS_CODES });
  });
});
