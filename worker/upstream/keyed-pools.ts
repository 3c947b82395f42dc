/**
 * A host's pools and HTTP/2 sessions of their own, by what their connections carry that others
 * do not (Envoy keys its pools by the transport socket options): a server name (auto_sni), a
 * downstream a PROXY header names. One made for a downstream goes when that downstream's
 * connection closes: no other request could use its connections.
 */
export class KeyedPools<T extends { close(): unknown }> {
  private readonly byKey = new Map<string, T>();

  get(key: string, make: () => T, until?: { once(event: 'close', f: () => void): unknown }): T {
    let pool = this.byKey.get(key);
    if (pool) return pool;
    const made = make();
    this.byKey.set(key, made);
    until?.once('close', () => {
      if (this.byKey.get(key) !== made) return;
      this.byKey.delete(key);
      void made.close();
    });
    pool = made;
    return pool;
  }

  values(): IterableIterator<T> {
    return this.byKey.values();
  }

  clear(): void {
    this.byKey.clear();
  }
}
