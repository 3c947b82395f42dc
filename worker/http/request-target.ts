/** Request targets and Host headers as the connection manager reads them. */

/** `http://host[:port]/path?query` as its authority and origin-form path; undefined when it is not one. */
export function absoluteForm(target: string): { authority: string; path: string } | undefined {
  const m = /^https?:\/\/([^/?#]+)([^#]*)/i.exec(target);
  if (!m) return undefined;
  const rest = m[2]!;
  return { authority: m[1]!.replace(/^[^@]*@/, ''), path: rest.startsWith('/') ? rest : `/${rest}` };
}

export function hasDuplicateHost(raw: string[]): boolean {
  let seen = false;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length === 4 && name.toLowerCase() === 'host') {
      if (seen) return true;
      seen = true;
    }
  }
  return false;
}
