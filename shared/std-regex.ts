/**
 * Regexes Envoy compiles with std::regex (ECMAScript grammar), not RE2: stats_config.stats_tags,
 * whose Istio bootstraps use lookaheads. JavaScript's RegExp is that grammar, except for the
 * POSIX class names std::regex also takes inside a bracket expression (`[_.[:digit:]]`), which
 * are translated here.
 */
const CLASSES: Readonly<Record<string, string>> = {
  alnum: 'a-zA-Z0-9',
  alpha: 'a-zA-Z',
  blank: ' \\t',
  cntrl: '\\x00-\\x1f\\x7f',
  digit: '0-9',
  d: '0-9',
  graph: '\\x21-\\x7e',
  lower: 'a-z',
  print: '\\x20-\\x7e',
  punct: '!-\\/:-@\\[-`{-~',
  space: ' \\t\\n\\r\\f\\v',
  s: ' \\t\\n\\r\\f\\v',
  upper: 'A-Z',
  w: 'a-zA-Z0-9_',
  xdigit: '0-9a-fA-F',
};

/** A std::regex ECMAScript pattern as a JavaScript RegExp (throws its syntax error, or for an unknown class name). */
export function stdRegex(source: string, flags = ''): RegExp {
  const translated = source.replace(/\[:([a-z]+):\]/g, (whole, name: string) => {
    const cls = CLASSES[name];
    if (cls === undefined) throw new SyntaxError(`unknown character class name '${name}' in ${JSON.stringify(source)}`);
    return cls;
  });
  return new RegExp(translated, flags);
}
