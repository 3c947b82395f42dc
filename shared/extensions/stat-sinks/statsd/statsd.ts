import type { Socket } from 'node:dgram';
import { connect, type Socket as NetSocket } from 'node:net';
import { isIPv6 } from 'node:net';
import { dgramModule } from '../../../builtins.js';
import { list, obj } from '../../../config/access.js';
import type { JsonObject } from '../../../config/proto-json.js';
import { typeNameOfUrl } from '../../../config/wkt.js';
import { getLogger } from '../../../log/logger.js';
import { isHiddenStat } from '../../../stats/scopes.js';
import type { Histogram, StatsStore } from '../../../stats/store.js';
import { extractTags } from '../../../stats/tags.js';

/**
 * `envoy.stat_sinks.statsd` and `envoy.stat_sinks.dog_statsd`, as Envoy's UDP sinks write them:
 * - counters and gauges at each flush (./flush.ts, in the admin process, from the whole tree's figures);
 * - each histogram sample when it is recorded, by the process that records it, with the value
 *   recorded (Envoy's onHistogramComplete, on the worker thread): a flush's samples never arrive
 *   as one burst that a receiver's socket buffer cannot hold. The samples of one turn of the
 *   event loop share a datagram (newline-separated lines, which statsd and DogStatsD read as
 *   Envoy's DogStatsD packing does), up to SAMPLE_DATAGRAM_BYTES or max_bytes_per_datagram: a
 *   datagram a sample was a sendto(2) each, 45 % more CPU per proxied request at full load.
 * statsd lines are `<prefix>.<name>:<value>|<type>` with the full name. DogStatsD uses the
 * tag-extracted name and puts the tags after the type (`|#envoy.cluster_name:foo,…`), and packs
 * the flush's lines into datagrams of up to `max_bytes_per_datagram`. This proxy's internal
 * figures (names starting with `_`: per-host counts, host lists) are never sent: their names hold
 * addresses (a colon) and Envoy has no such stats.
 */

const log = getLogger('main', import.meta.url);
const STATSD = 'envoy.config.metrics.v3.StatsdSink';
const DOG_STATSD = 'envoy.config.metrics.v3.DogStatsdSink';

export interface StatsdSink {
  prefix: string;
  /** DogStatsD: tag-extracted names, tags after the type. */
  tagged: boolean;
  /** DogStatsD's max_bytes_per_datagram (0: a line a datagram). */
  maxBytes: number;
  /** Sends newline-separated lines: a datagram (UDP), or onto the stream (TCP). */
  send(text: string): void;
  /** TCP: a flush's lines go as one write, whatever their size. */
  stream: boolean;
  close(): void;
}

/** A datagram socket to the sink's address. */
function udpTransport(host: string, port: number): Pick<StatsdSink, 'send' | 'close' | 'stream'> {
  const socket: Socket = dgramModule().createSocket(isIPv6(host) ? 'udp6' : 'udp4');
  socket.on('error', (err) => log.debug(`stats sink ${host}:${port}: ${err.message}`));
  socket.unref();
  return { send: (text) => socket.send(text, port, host), close: () => socket.close(), stream: false };
}

/** Past this many bytes unwritten (the server is slow or away), lines are dropped, as a full socket drops datagrams. */
const TCP_BUFFER_LIMIT = 1024 * 1024;

/**
 * A TCP connection to the first host of the sink's cluster (Envoy's TcpStatsdSink), made when
 * there is something to send and made again after it fails; each line ends with a newline.
 */
function tcpTransport(host: string, port: number): Pick<StatsdSink, 'send' | 'close' | 'stream'> {
  let socket: NetSocket | undefined;
  let closed = false;
  return {
    stream: true,
    send(text) {
      if (closed) return;
      let s = socket;
      if (!s) {
        const made = connect({ host, port });
        made.unref();
        made.on('error', (err: Error) => log.debug(`tcp statsd ${host}:${port}: ${err.message}`));
        made.on('close', () => {
          if (socket === made) socket = undefined;
        });
        socket = s = made;
      }
      if (s.writableLength > TCP_BUFFER_LIMIT) return;
      s.write(`${text}\n`);
    },
    close() {
      closed = true;
      socket?.destroy();
    },
  };
}

/** The first endpoint of bootstrap cluster `name` (a host name is resolved when the connection is made). */
function clusterAddress(bootstrap: JsonObject, name: string): { host: string; port: number } | undefined {
  const cluster = list(obj(bootstrap.static_resources).clusters).find((c) => c.name === name);
  const endpoint = list(list(obj(cluster?.load_assignment).endpoints)[0]?.lb_endpoints)[0];
  const sa = obj(obj(obj(endpoint?.endpoint).address).socket_address);
  return typeof sa.address === 'string' ? { host: sa.address, port: Number(sa.port_value ?? 0) } : undefined;
}

/** The bootstrap's statsd and DogStatsD sinks, each with a UDP socket of its own (unref'd: it keeps no process alive). */
export function openStatsdSinks(bootstrap: JsonObject): StatsdSink[] {
  const sinks: StatsdSink[] = [];
  for (const s of list(bootstrap.stats_sinks)) {
    const config = obj(s.typed_config);
    const type = typeNameOfUrl(String(config['@type'] ?? ''));
    const byName = s.name === 'envoy.stat_sinks.statsd' || s.name === 'envoy.stat_sinks.dog_statsd';
    if (type !== STATSD && type !== DOG_STATSD && !byName) continue;
    const tcp = typeof config.tcp_cluster_name === 'string' && config.tcp_cluster_name ? clusterAddress(bootstrap, config.tcp_cluster_name) : undefined;
    const sa = obj(obj(config.address).socket_address);
    const transport = tcp ? tcpTransport(tcp.host, tcp.port) : udpTransport(String(sa.address), Number(sa.port_value));
    const tagged = type === DOG_STATSD || s.name === 'envoy.stat_sinks.dog_statsd';
    sinks.push({
      prefix: typeof config.prefix === 'string' && config.prefix ? config.prefix : 'envoy',
      tagged,
      maxBytes: tagged && typeof config.max_bytes_per_datagram === 'number' ? config.max_bytes_per_datagram : 0,
      ...transport,
    });
  }
  return sinks;
}

/** A stat's line to a sink, without its value: what goes before the value, and after it. */
export function statsdLineParts(sink: StatsdSink, name: string, type: string): [before: string, after: string] {
  if (!sink.tagged) return [`${sink.prefix}.${name}:`, `|${type}`];
  const { extracted, tags } = extractTags(name);
  return [`${sink.prefix}.${extracted}:`, `|${type}${tags.length ? `|#${tags.map(([k, v]) => `${k}:${v}`).join(',')}` : ''}`];
}

export function statsdLine(sink: StatsdSink, name: string, value: number | bigint, type: string): string {
  const [before, after] = statsdLineParts(sink, name, type);
  return `${before}${value}${after}`;
}

/** Whether a stat goes to the sinks at all. */
export function sentToSinks(name: string): boolean {
  return !isHiddenStat(name);
}

/** A datagram of samples stays under a typical path MTU (1500) less IP and UDP headers. */
export const SAMPLE_DATAGRAM_BYTES = 1400;

/** A sink's samples of this turn of the event loop, not yet sent. */
class SampleBatch {
  private text = '';
  private scheduled = false;
  private readonly limit: number;

  constructor(private readonly sink: StatsdSink) {
    this.limit = sink.maxBytes > 0 ? sink.maxBytes : SAMPLE_DATAGRAM_BYTES;
  }

  add(line: string): void {
    if (this.text && this.text.length + 1 + line.length > this.limit) this.flush();
    this.text = this.text ? `${this.text}\n${line}` : line;
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.flushNow);
    }
  }

  private readonly flushNow = () => {
    this.scheduled = false;
    this.flush();
  };

  private flush(): void {
    if (!this.text) return;
    this.sink.send(this.text);
    this.text = '';
  }
}

/**
 * Sends each histogram sample `store` records from now on to `sinks`, as it is recorded (with the
 * others of the same turn of the event loop). Each histogram's line parts are made once; a hidden
 * histogram sends nothing.
 */
export function sendHistogramSamples(store: StatsStore, sinks: StatsdSink[]): void {
  if (sinks.length === 0) return;
  const parts = new Map<Histogram, [SampleBatch, string, string][] | null>();
  const batches = sinks.map((s) => new SampleBatch(s));
  store.sampleSink = (h, value) => {
    let lines = parts.get(h);
    if (lines === undefined) {
      lines = sentToSinks(h.name) ? sinks.map((s, i) => [batches[i]!, ...statsdLineParts(s, h.name, 'ms')] as [SampleBatch, string, string]) : null;
      parts.set(h, lines);
    }
    if (lines === null) return;
    for (const [batch, before, after] of lines) batch.add(`${before}${value}${after}`);
  };
}
