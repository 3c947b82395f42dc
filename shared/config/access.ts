import type { JsonObject } from './proto-json.js';

/**
 * Reading normalised configuration: a message field that is absent reads as an empty message,
 * a repeated field that is absent as an empty list, so callers need no null checks.
 */
export function obj(v: unknown): JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as JsonObject) : {};
}

export function list(v: unknown): JsonObject[] {
  return Array.isArray(v) ? (v as JsonObject[]) : [];
}
