import { connect, type Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { formatAddress } from '../../shared/address.js';
import { tlsModule } from '../../shared/builtins.js';
import type { envoy } from '../../shared/config/envoy-types.js';
import { Level } from '../../shared/log/levels.js';
import { getLogger } from '../../shared/log/logger.js';
import { connectionTag } from '../../shared/log/log-tags.js';
import { healthFlagsText } from '../../shared/upstream/health.js';
import type { UpstreamHost } from '../../shared/upstream/hosts.js';
import { connectProxied } from '../../shared/upstream/proxied-socket.js';
import { applyTcpKeepaliveOnConnect } from '../../shared/upstream/tcp-keepalive.js';
import type { UpstreamTls } from '../../shared/extensions/transport-sockets/tls/upstream.js';
import type { UpstreamProxyHeader } from '../../shared/extensions/transport-sockets/proxy-protocol/upstream-proxy-protocol.js';
import type { TcpKeepalive } from '../../shared/upstream/tcp-keepalive.js';

type TcpHealthCheck = envoy.config.core.v3.HealthCheck.TcpHealthCheck;
type HealthCheckPayload = envoy.config.core.v3.HealthCheck.Payload;

/**
 * One TCP health check (HealthCheck.tcp_health_check) of a host, on a fresh connection: connect
 * (with the cluster's TLS, PROXY header and keepalive, as its traffic), write `send`, and pass once
 * every `receive` payload was seen in order (a connect alone passes without them). Its debug lines
 * are Envoy's TcpHealthCheckerImpl's, under 'hc'.
 */

const log = getLogger('hc', import.meta.url);

/** A check's verdict: passed, an answer that fails, a network failure (refused, reset, closed early), a timeout. */
export type Outcome = 'success' | 'failure' | 'network' | 'timeout';

/** What a check needs of its cluster's checker (health-checker.ts). */
export interface TcpCheckContext {
  readonly thresholds: { timeoutMs: number };
  readonly tcpKeepalive: TcpKeepalive | undefined;
  tlsFor(host: UpstreamHost): UpstreamTls | undefined;
  proxyHeaderFor(host: UpstreamHost): UpstreamProxyHeader | undefined;
}

interface Payload {
  bytes: Buffer;
}

function payload(p: HealthCheckPayload): Payload {
  if (typeof p.text === 'string') return { bytes: Buffer.from(p.text, 'hex') };
  return { bytes: Buffer.from(p.binary ?? '', 'base64') };
}

export function tcpCheck(checker: TcpCheckContext, host: UpstreamHost, tcp: TcpHealthCheck): Promise<Outcome> {
  const send = tcp.send ? payload(tcp.send) : undefined;
  const receive = (tcp.receive ?? []).map(payload);
  const { timeoutMs } = checker.thresholds;
  return new Promise((resolve) => {
    let done = false;
    let socket: Socket | undefined;
    const finish = (o: Outcome) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket?.destroy();
      resolve(o);
    };
    const target = { host: host.healthCheckIp, port: host.healthCheckPort };
    // Envoy's TCP health checker's debug lines, under 'hc' with the connection's id.
    const address = formatAddress(target.host, target.port);
    const debug = (line: () => string) => {
      if (log.enabled(Level.debug)) log.debug(`${connectionTag(socket)}hc tcp ${line()}`);
    };
    const passed = () => {
      if (!done) debug(() => `healthcheck passed, health_check_address=${address}`);
      finish('success');
    };
    const timer = setTimeout(() => {
      debug(() => `connection timeout, health_flags=${healthFlagsText(host.healthFlags)}, health_check_address=${address}`);
      finish('timeout');
    }, timeoutMs);
    const tls = checker.tlsFor(host);
    const proxy = checker.proxyHeaderFor(host);
    const keepalive = checker.tcpKeepalive;
    socket = proxy
      ? connectProxied({ ip: target.host, port: target.port, tls, proxy: { header: proxy, origin: undefined }, ...(keepalive ? { keepalive } : {}) })
      : tls ? tls.guard(tlsModule().connect({ ...target, ...tls.connectOptions() })) : connect(target);
    if (keepalive && !proxy) applyTcpKeepaliveOnConnect(socket, keepalive);
    let received = Buffer.alloc(0);
    socket.on(tls ? 'secureConnect' : 'connect', () => {
      tls?.outcome(null, socket as TLSSocket);
      if (send) socket!.write(send.bytes);
      if (receive.length === 0) passed();
    });
    socket.on('data', (d: Buffer) => {
      received = Buffer.concat([received, d]);
      debug(() => `total pending buffer=${received.length}`);
      // Every receive block must appear, in order, not necessarily contiguous (Envoy's fuzzy match).
      let at = 0;
      for (const r of receive) {
        const found = received.indexOf(r.bytes, at);
        if (found < 0) return;
        at = found + r.bytes.length;
      }
      passed();
    });
    const unexpectedClose = () => {
      if (!done) debug(() => `connection unexpected closed, health_check_address=${address}`);
      finish('network');
    };
    // Closed before every payload was seen: a network failure, as Envoy's TCP checker counts a remote close.
    socket.on('end', () => (receive.length ? unexpectedClose() : passed()));
    socket.on('error', (err) => {
      tls?.outcome(err);
      unexpectedClose();
    });
  });
}
