import { compileStringMatcher } from '../../../matchers.js';
import type { SanMatcherConfig } from './context.js';

/**
 * Envoy's match_typed_subject_alt_names: a peer certificate is accepted when any of its subject
 * alternative names of the matcher's type fits any matcher. An exact DNS matcher also accepts a
 * wildcard SAN covering it (`*.example.com` for `api.example.com`), as Envoy's DNS name match does.
 */

const SAN_PREFIX: Record<string, string> = { DNS: 'DNS', URI: 'URI', EMAIL: 'email', IP_ADDRESS: 'IP Address' };

/** SANs from OpenSSL's text ("DNS:a, IP Address:1.2.3.4, URI:spiffe://x"), as [type, value]. */
export function sanEntries(text: string | undefined): [string, string][] {
  const out: [string, string][] = [];
  for (const entry of (text ?? '').split(', ')) {
    const colon = entry.indexOf(':');
    if (colon > 0) out.push([entry.slice(0, colon), entry.slice(colon + 1)]);
  }
  return out;
}

function dnsWildcardCovers(san: string, name: string): boolean {
  if (!san.startsWith('*.')) return false;
  const dot = name.indexOf('.');
  return dot > 0 && name.slice(dot).toLowerCase() === san.slice(1).toLowerCase();
}

/** A check of a peer's `subjectaltname` text; undefined when there are no matchers (anything goes). */
export function compileSanMatchers(configs: SanMatcherConfig[]): ((subjectAltName: string | undefined) => boolean) | undefined {
  if (configs.length === 0) return undefined;
  const compiled = configs.map((c) => {
    const match = compileStringMatcher(c.matcher);
    const exact = typeof c.matcher.exact === 'string' ? c.matcher.exact : undefined;
    const prefix = SAN_PREFIX[c.sanType];
    return (type: string, value: string) => {
      if (prefix !== undefined && type !== prefix) return false;
      if (prefix === undefined && c.sanType !== 'ANY') return false;
      return match(value) || (type === 'DNS' && exact !== undefined && dnsWildcardCovers(value, exact));
    };
  });
  return (text) => {
    const entries = sanEntries(text);
    return compiled.some((m) => entries.some(([type, value]) => m(type, value)));
  };
}
