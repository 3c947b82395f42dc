// The part of messages.cjs (generated) that framing.ts uses: the one message all others nest in.
interface Writer {
  finish(): Uint8Array;
}
interface MessageType {
  fromObject(object: object): object;
  encode(message: object): Writer;
  decode(bytes: Uint8Array): object;
  toObject(message: object, options: { longs: NumberConstructor; defaults: boolean; oneofs: boolean }): object;
}
declare const root: { proxy: { hot_restart: { HotRestartMessage: MessageType } } };
export = root;
