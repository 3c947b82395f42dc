/** Up to `limit` bytes of a body, and whether there was more. */
export class BodyCapture {
  readonly chunks: Buffer[] = [];
  length = 0;
  truncated = false;

  constructor(private readonly limit: number) {}

  add(chunk: Uint8Array | string): void {
    const data = typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const room = this.limit - this.length;
    if (data.length > room) this.truncated = true;
    if (room <= 0) return;
    const kept = data.length > room ? data.subarray(0, room) : data;
    this.chunks.push(Buffer.from(kept));
    this.length += kept.length;
  }

  bytes(): Buffer {
    return Buffer.concat(this.chunks);
  }
}
