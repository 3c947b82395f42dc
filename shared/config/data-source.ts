import { readFileSync } from 'node:fs';
import type { JsonObject } from './proto-json.js';

/** A core.v3.DataSource's bytes: inline (string or base64 bytes), a file read now, or an environment variable. */
export function readDataSource(ds: JsonObject | undefined): Buffer | undefined {
  if (!ds) return undefined;
  if (typeof ds.inline_string === 'string') return Buffer.from(ds.inline_string);
  if (typeof ds.inline_bytes === 'string') return Buffer.from(ds.inline_bytes, 'base64');
  if (typeof ds.filename === 'string') return readFileSync(ds.filename);
  if (typeof ds.environment_variable === 'string') return Buffer.from(process.env[ds.environment_variable] ?? '');
  return undefined;
}
