/**
 * The extensions' messages, as their descriptors give them: the fields each implements and why it
 * refuses others. The extension registry (shared/extensions/registry.ts) adds every extension's
 * as it loads; supported.ts reads them beside the core's. This module holds data only, so that a
 * worker that loads the registry (to build its filters) does not load supported.ts and protobufjs
 * with it, and a process that checks only core messages (the admin's /tap) does without the
 * extensions' code. The configuration's loaders (bootstrap.ts, xds-resource.ts) import the registry,
 * so every extension's messages are here before any configuration is checked.
 */

export const extensionFields = new Map<string, ReadonlySet<string>>();
export const extensionReasons = new Map<string, string>();

export function addExtensionMessages(fields: Readonly<Record<string, readonly string[]>>, reasons: Readonly<Record<string, string>>): void {
  for (const [message, names] of Object.entries(fields)) extensionFields.set(message, new Set(names));
  for (const [field, reason] of Object.entries(reasons)) extensionReasons.set(field, reason);
}
