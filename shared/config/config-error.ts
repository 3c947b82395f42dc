/**
 * A problem with the configuration, as the loader reports it: a stable `code` that tests and
 * tools match on, the field `path` it is about (`static_resources.clusters[0].name`), and the
 * text an operator reads. `source` says where the configuration came from when that is not the
 * bootstrap itself (a file, `--config-yaml`). The text is `<source>: <path>: <detail>`, the
 * layout the proxy has always printed.
 */
export type ConfigErrorCode =
  /** A file that cannot be read. */
  | 'unreadable'
  /** Not YAML, JSON, text or binary protobuf; or not a mapping. */
  | 'parse'
  /** Past the loader's limits (size, depth, values). */
  | 'too_large'
  /** A field the message does not have. */
  | 'unknown_field'
  /** A value the field cannot hold: wrong type, unknown enum name, malformed duration, two members of a oneof. */
  | 'invalid_value'
  /** A rule of Envoy's API (its protoc-gen-validate annotations, a required oneof). */
  | 'constraint'
  /** A field this proxy does not implement. */
  | 'unsupported_field'
  /** An extension (type URL or name) this proxy does not implement. */
  | 'unsupported_extension'
  /** An extension of another kind than the field takes (a decompressor where a compressor goes). */
  | 'wrong_extension'
  /** An extension --disable-extensions turned off. */
  | 'disabled_extension'
  /** A value, a mode or a combination this proxy does not implement (the field is known). */
  | 'unsupported'
  /** A name that refers to nothing: a cluster, a listener, a file. */
  | 'unknown_reference'
  /** Two of what must be one: names, addresses, matching rules. */
  | 'duplicate'
  /** Fields that exclude each other, or a value that does not fit another. */
  | 'conflict'
  /** Something required is not there. */
  | 'missing'
  /** Any other of Envoy's rules: a regex without a group, a weight out of range. */
  | 'invalid'
  /** A script, certificate or other material that does not load. */
  | 'load_failed';

export class ConfigError {
  readonly path: string;

  constructor(
    readonly code: ConfigErrorCode,
    path: string,
    readonly detail: string,
    readonly source = '',
  ) {
    // Paths are built as `${parent}.field` from a root of '': the root's own fields have no dot.
    this.path = path.startsWith('.') ? path.slice(1) : path;
  }

  get text(): string {
    const at = this.path ? `${this.path}: ${this.detail}` : this.detail;
    return this.source ? `${this.source}: ${at}` : at;
  }

  toString(): string {
    return this.text;
  }

  /** The same problem, in a configuration that came from `source`. */
  from(source: string): ConfigError {
    return new ConfigError(this.code, this.path, this.detail, this.source ? `${source}: ${this.source}` : source);
  }

  /** The same problem, its path inside `outer` (a resource's place in a response). */
  within(outer: string): ConfigError {
    const path = !this.path || this.path === '<root>' ? outer : this.path.startsWith('[') ? `${outer}${this.path}` : `${outer}.${this.path}`;
    return new ConfigError(this.code, path, this.detail, this.source);
  }
}

/**
 * Thrown by code that compiles configuration (an access-log format, a matcher) when it cannot,
 * and caught by the validation that reports it: what kind of error it is travels with it.
 */
export class ConfigFault extends Error {
  constructor(
    readonly code: ConfigErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export function configError(code: ConfigErrorCode, path: string, detail: string): ConfigError {
  return new ConfigError(code, path, detail);
}

/** The errors' texts, joined as the proxy prints a list of them (beside others that are only text: a socket that would not bind). */
export function errorText(errors: readonly (ConfigError | string)[], separator = '; '): string {
  return errors.map(String).join(separator);
}

/** Errors that crossed a process boundary (structured clone keeps the fields, not the class), made ConfigErrors again. */
export function reviveConfigErrors(errors: readonly { code: ConfigErrorCode; path: string; detail: string; source?: string }[]): ConfigError[] {
  return errors.map((e) => new ConfigError(e.code, e.path, e.detail, e.source ?? ''));
}
