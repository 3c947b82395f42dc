import type { AdminEndpoint } from './endpoint.js';

/** The /help body (also the tail of every 404): endpoints sorted by path, each with its parameters. */
export function helpText(endpoints: readonly AdminEndpoint[]): string {
  let out = 'admin commands are:\n';
  for (const e of [...endpoints].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))) {
    out += `  ${e.path}${e.mutates ? ' (POST)' : ''}: ${e.help}\n`;
    for (const p of e.params ?? []) out += `      ${p.name}: ${p.help}${p.choices ? `; One of (${p.choices.join(', ')})` : ''}\n`;
  }
  return out;
}
