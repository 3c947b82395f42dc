// The fields of Envoy's API that this proxy refuses in the messages it implements in part, with
// the reason where one is written down (shared/config/supported.ts), as Markdown.
// Usage: node --import tsx scripts/refused-fields.ts [message-prefix ...]
//   e.g. scripts/refused-fields.ts envoy.config.route envoy.extensions.filters.http
// Deprecated fields are listed apart: Envoy itself warns on them.
import { envoySchema } from '../shared/config/schema.js';
import { refusedFields } from '../shared/config/supported.js';
// The extensions' messages are added as their registry loads.
import '../shared/extensions/registry.js';

const prefixes = process.argv.slice(2);
const refusals = refusedFields(envoySchema()).filter((r) => !prefixes.length || prefixes.some((p) => r.message.startsWith(p)));
const byMessage = new Map<string, typeof refusals>();
for (const r of refusals) byMessage.set(r.message, [...(byMessage.get(r.message) ?? []), r]);
for (const [message, list] of byMessage) {
  const current = list.filter((r) => !r.deprecated);
  const deprecated = list.filter((r) => r.deprecated);
  console.log(`- \`${message}\`:`);
  for (const r of current) console.log(`  - \`${r.field}\`${r.reason ? `: ${r.reason}` : ''}`);
  if (deprecated.length) console.log(`  - deprecated: ${deprecated.map((r) => `\`${r.field}\`${r.reason ? ` (${r.reason})` : ''}`).join(', ')}`);
}
console.error(`${refusals.length} refused fields in ${byMessage.size} messages`);
