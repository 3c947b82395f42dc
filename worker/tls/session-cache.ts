import type { Server as TlsServer } from 'node:tls';

/**
 * A listener's stateful TLS sessions (session IDs, TLS 1.2), kept by the worker whose handshake
 * made them, as BoringSSL's internal cache keeps Envoy's: at most MAX_SESSIONS (OpenSSL's
 * default), each for the context's session_timeout. Node's TLS keeps none itself (its contexts
 * set SSL_SESS_CACHE_NO_INTERNAL); this cache is what its newSession/resumeSession events ask.
 * A client that reconnects to another worker makes a full handshake (tickets resume anywhere).
 */
const MAX_SESSIONS = 20 * 1024;

export function keepSessions(server: TlsServer, timeoutS: number): void {
  const sessions = new Map<string, { data: Buffer; until: number }>();
  server.on('newSession', (id: Buffer, data: Buffer, done: () => void) => {
    const key = id.toString('hex');
    sessions.delete(key);
    if (sessions.size >= MAX_SESSIONS) sessions.delete(sessions.keys().next().value!);
    sessions.set(key, { data, until: performance.now() + timeoutS * 1000 });
    done();
  });
  server.on('resumeSession', (id: Buffer, done: (err: Error | null, data: Buffer | null) => void) => {
    const key = id.toString('hex');
    const found = sessions.get(key);
    if (found && found.until < performance.now()) sessions.delete(key);
    done(null, found && found.until >= performance.now() ? found.data : null);
  });
}
