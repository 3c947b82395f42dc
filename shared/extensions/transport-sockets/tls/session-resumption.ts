import type { SecureContextOptions } from 'node:tls';
import { cryptoModule } from '../../../builtins.js';
import { list, obj } from '../../../config/access.js';
import { configError, type ConfigError } from '../../../config/config-error.js';
import type { JsonObject } from '../../../config/proto-json.js';
import { durationMs } from '../../../config/wkt.js';

/**
 * A listener's TLS session resumption, as its DownstreamTlsContext sets it:
 * - stateless (session tickets), on unless disable_stateless_session_resumption. Tickets are
 *   sealed with one key for the whole tree, so that a client resumes whichever worker takes its
 *   next connection: session_ticket_keys' key, or one the supervisor draws when it loads the
 *   context (Envoy draws its own per process too). Envoy's key is 80 bytes (name, HMAC secret,
 *   AES-256 key); Node's TLS takes 48 (name, HMAC secret, AES-128 key), taken from the same parts
 *   of it, so one configured key gives one ticket key everywhere this proxy runs it. Envoy also
 *   takes several keys (the first seals, all open); Node's TLS takes one, so more are refused.
 * - stateful (session IDs, TLS 1.2), on unless disable_stateful_session_resumption: each worker
 *   keeps the sessions of its own handshakes (worker/tls/session-cache.ts).
 * - session_timeout: a session's lifetime (BoringSSL's two hours without it, as Envoy's).
 */
export interface SessionResumption {
  /** Node's 48-byte ticket key, base64; undefined: no tickets. */
  ticketKey: string | undefined;
  stateful: boolean;
  timeoutS: number;
}

const ENVOY_KEY_BYTES = 80;
const DEFAULT_TIMEOUT_S = 7200;

export function sessionResumptionOf(config: JsonObject, path: string, errors: ConfigError[], read: (ds: JsonObject) => Buffer | undefined): SessionResumption {
  const timeoutS = typeof config.session_timeout === 'string' ? Math.floor(durationMs(config.session_timeout) / 1000) : DEFAULT_TIMEOUT_S;
  let ticketKey: string | undefined;
  if (config.disable_stateless_session_resumption !== true) {
    const keys = list(obj(config.session_ticket_keys).keys);
    if (keys.length > 1) {
      errors.push(configError('unsupported', `${path}.session_ticket_keys.keys`, `${keys.length} keys given: Node's TLS seals and opens tickets with one key, so keys beyond the first (Envoy's keys for rotation) cannot be honoured; give one`));
    } else if (keys.length === 1) {
      let key: Buffer | undefined;
      try {
        key = read(keys[0]!);
      } catch (err) {
        errors.push(configError('unreadable', `${path}.session_ticket_keys.keys[0]`, (err as Error).message));
      }
      if (key !== undefined && key.length !== ENVOY_KEY_BYTES) errors.push(configError('invalid', `${path}.session_ticket_keys.keys[0]`, `Incorrect TLS session ticket key length. Length ${key.length}, expected length ${ENVOY_KEY_BYTES}.`));
      else if (key !== undefined) ticketKey = Buffer.concat([key.subarray(0, 16), key.subarray(16, 32), key.subarray(48, 64)]).toString('base64');
    } else {
      ticketKey = cryptoModule().randomBytes(48).toString('base64');
    }
  }
  return { ticketKey, stateful: config.disable_stateful_session_resumption !== true, timeoutS };
}

/**
 * node:tls server options for it (the stateful cache is the worker's: see worker/tls/session-cache.ts).
 * The session ID context (which a resumed session must match) is the context's certificates and
 * CA, as Envoy derives its own from them, not Node's default (a hash of the process's command line,
 * which differs from one worker to the next).
 */
export function resumptionOptions(r: SessionResumption | undefined, material: string): Partial<SecureContextOptions> & { sessionIdContext?: string } {
  if (!r) return {};
  const sessionIdContext = cryptoModule().createHash('sha256').update(material).digest('hex').slice(0, 32);
  const noTicket = cryptoModule().constants.SSL_OP_NO_TICKET;
  return r.ticketKey !== undefined ? { ticketKeys: Buffer.from(r.ticketKey, 'base64'), sessionTimeout: r.timeoutS, sessionIdContext } : { secureOptions: noTicket, sessionTimeout: r.timeoutS, sessionIdContext };
}
