import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { proxyV1Header, proxyV2Header, proxyV2LocalHeader, readProxyHeader, V2_SIGNATURE, type ReadOptions } from '../shared/network/proxy-protocol.js';
import { ipBytes, ipv6Text } from '../shared/network/ip-bytes.js';
import { sanitizeUtf8 } from '../shared/network/utf8.js';

// The PROXY protocol header as Envoy's listener filter reads it (proxy_protocol_test.cc's cases).
const strict: ReadOptions = { allowV1: true, allowV2: true, allowAbsent: false };
const lenient: ReadOptions = { ...strict, allowAbsent: true };
const v1 = (s: string) => Buffer.from(s, 'latin1');
const v2 = (...bytes: number[]) => Buffer.concat([V2_SIGNATURE, Buffer.from(bytes)]);

describe('PROXY protocol version 1', () => {
  it('reads TCP4 and TCP6 lines, and leaves what follows', () => {
    const data = v1('PROXY TCP4 1.2.3.4 253.253.253.253 65535 1234\r\nmore data');
    assert.deepEqual(readProxyHeader(data, strict), { state: 'done', version: 'v1', length: 47, local: false, source: { ip: '1.2.3.4', port: 65535 }, destination: { ip: '253.253.253.253', port: 1234 }, tlvs: [] });
    const six = readProxyHeader(v1('PROXY TCP6 1:2:3::4 5:6::7:8 65535 1234\r\n'), strict);
    assert.equal(six.state, 'done');
    assert.deepEqual(six.state === 'done' && [six.source, six.destination], [{ ip: '1:2:3::4', port: 65535 }, { ip: '5:6::7:8', port: 1234 }]);
  });

  it('UNKNOWN keeps the connection\'s own addresses, whatever follows it on the line', () => {
    for (const line of ['PROXY UNKNOWN\r\n', 'PROXY UNKNOWN 1.2.3.4 5.6.7.8 1 2\r\n']) {
      assert.deepEqual(readProxyHeader(v1(line), strict), { state: 'done', version: 'v1', length: line.length, local: true, tlvs: [] });
    }
  });

  it('waits for the whole line, one byte at a time', () => {
    const line = 'PROXY TCP4 1.2.3.4 5.6.7.8 1 2\r\n';
    for (let i = 1; i < line.length; i++) assert.deepEqual(readProxyHeader(v1(line.slice(0, i)), strict), { state: 'more' }, `at ${i}`);
    assert.equal(readProxyHeader(v1(line), strict).state, 'done');
  });

  it('refuses malformed lines as version 1 errors', () => {
    for (const line of [
      'PROXY TCP4 1.2.3.4 5.6.7.8 65536 1234\r\n',
      'PROXY TCP4 1.2.3.4 5.6.7.8 -1 1234\r\n',
      'PROXY TCP4 1.2.3.4 ::1 1 2\r\n',
      'PROXY TCP6 1.2.3.4 5.6.7.8 1 2\r\n',
      'PROXY TCP5 1.2.3.4 5.6.7.8 1 2\r\n',
      'PROXY TCP4  1.2.3.4 5.6.7.8 1 2\r\n',
      'PROXY TCP4 1.2.3.4 5.6.7.8 1\r\n',
      'PROXY TCP4 224.0.0.1 5.6.7.8 1 2\r\n',
      'PROXY TCP4 1.2.3.4 255.255.255.255 1 2\r\n',
      'PROXY TCP4 0.0.0.0 5.6.7.8 1 2\r\n',
      'PROXY TCP6 ff02::1 ::2 1 2\r\n',
      'PROXY\r\n',
      'GET /\r\n',
    ]) {
      assert.deepEqual(readProxyHeader(v1(line), strict), { state: 'error', version: 'v1' }, line);
    }
  });

  it('refuses bytes that are neither version as soon as 16 have come, and a line past 108 bytes', () => {
    assert.deepEqual(readProxyHeader(v1('GET / HTTP/1.1\r\n'), strict), { state: 'error', version: undefined });
    assert.deepEqual(readProxyHeader(v1(`PROXY TCP4 ${'1'.repeat(98)}`), strict), { state: 'error', version: undefined });
    assert.deepEqual(readProxyHeader(v1(`PROXY TCP4 ${'1'.repeat(97)}`), strict), { state: 'more' });
  });
});

describe('PROXY protocol version 2', () => {
  const inet = [0x01, 0x02, 0x03, 0x04, 0x00, 0x01, 0x01, 0x02, 0x03, 0x05, 0x00, 0x02];

  it('reads an IPv4 PROXY header and leaves what follows', () => {
    const data = Buffer.concat([v2(0x21, 0x11, 0x00, 0x0c, ...inet), v1('more data')]);
    assert.deepEqual(readProxyHeader(data, strict), { state: 'done', version: 'v2', length: 28, local: false, source: { ip: '1.2.3.4', port: 773 }, destination: { ip: '0.1.1.2', port: 2 }, tlvs: [] });
    for (let i = 1; i < 28; i++) assert.deepEqual(readProxyHeader(data.subarray(0, i), strict), { state: 'more' }, `at ${i}`);
  });

  it('reads IPv6 addresses, over STREAM or DGRAM', () => {
    const six = [...ipBytes('1:2:3::4')!, ...ipBytes('5:6::7:8')!, 0x00, 0x08, 0x00, 0x02];
    for (const family of [0x21, 0x22]) {
      const r = readProxyHeader(v2(0x21, family, 0x00, 0x24, ...six), strict);
      assert.deepEqual(r.state === 'done' && [r.source, r.destination], [{ ip: '1:2:3::4', port: 8 }, { ip: '5:6::7:8', port: 2 }]);
    }
  });

  it('LOCAL keeps the connection\'s addresses and skips what its length covers', () => {
    assert.deepEqual(readProxyHeader(v2(0x20, 0x00, 0x00, 0x00), strict), { state: 'done', version: 'v2', length: 16, local: true, tlvs: [] });
    assert.deepEqual(readProxyHeader(v2(0x20, 0x11, 0x00, 0x0c, ...inet), strict), { state: 'done', version: 'v2', length: 28, local: true, tlvs: [] });
  });

  it('refuses other versions, commands, families and short lengths', () => {
    for (const head of [
      [0x11, 0x11, 0x00, 0x0c],
      [0x22, 0x11, 0x00, 0x0c],
      [0x21, 0x31, 0x00, 0x0c],
      [0x21, 0x01, 0x00, 0x0c],
      [0x21, 0x10, 0x00, 0x0c],
      [0x21, 0x11, 0x00, 0x0b],
    ]) {
      assert.deepEqual(readProxyHeader(v2(...head, ...inet), strict), { state: 'error', version: 'v2' }, head.join(','));
    }
  });

  it('reads TLVs, and refuses one that runs past the header', () => {
    const tlv = [0x02, 0x00, 0x04, 0x61, 0x62, 0x63, 0x64, 0xea, 0x00, 0x00];
    const r = readProxyHeader(v2(0x21, 0x11, 0x00, 12 + tlv.length, ...inet, ...tlv), strict);
    assert.deepEqual(r.state === 'done' && r.tlvs, [{ type: 2, value: Buffer.from('abcd') }, { type: 0xea, value: Buffer.alloc(0) }]);
    assert.deepEqual(readProxyHeader(v2(0x21, 0x11, 0x00, 12 + 2, ...inet, 0x02, 0x00), strict), { state: 'error', version: 'v2' });
    assert.deepEqual(readProxyHeader(v2(0x21, 0x11, 0x00, 12 + 4, ...inet, 0x02, 0x00, 0x02, 0x61), strict), { state: 'error', version: 'v2' });
  });
});

describe('allow_requests_without_proxy_protocol and disallowed_versions', () => {
  it('passes bytes that cannot begin a header, and waits on those that may', () => {
    assert.deepEqual(readProxyHeader(v1('GET / HTTP/1.1\r\n'), lenient), { state: 'absent' });
    assert.deepEqual(readProxyHeader(v1('PRO'), lenient), { state: 'more' });
    assert.deepEqual(readProxyHeader(Buffer.from([0x0d, 0x0a, 0x0d]), lenient), { state: 'more' });
    assert.equal(readProxyHeader(v1('PROXY TCP4 1.2.3.4 5.6.7.8 1 2\r\n'), lenient).state, 'done');
  });

  it('a disallowed version is found and refused; with headers optional it is not looked for', () => {
    assert.deepEqual(readProxyHeader(v1('PROXY TCP4 1.2.3.4 5.6.7.8 1 2\r\n'), { ...strict, allowV1: false }), { state: 'denied', version: 'v1' });
    assert.deepEqual(readProxyHeader(v2(0x20, 0x00, 0x00, 0x00), { ...strict, allowV2: false }), { state: 'denied', version: 'v2' });
    assert.deepEqual(readProxyHeader(v1('PROXY TCP4 1.2.3.4 5.6.7.8 1 2\r\n'), { ...lenient, allowV1: false }), { state: 'absent' });
  });
});

describe('writing PROXY headers', () => {
  it('version 1 lines', () => {
    assert.equal(proxyV1Header({ ip: '1.2.3.4', port: 1234 }, { ip: '5.6.7.8', port: 80 }).toString(), 'PROXY TCP4 1.2.3.4 5.6.7.8 1234 80\r\n');
    assert.equal(proxyV1Header({ ip: '::1', port: 1 }, { ip: 'a::b', port: 2 }).toString(), 'PROXY TCP6 ::1 a::b 1 2\r\n');
  });

  it('version 2, read back as written, with TLVs in order', () => {
    const tlvs = [{ type: 0x05, value: Buffer.from('id-1') }, { type: 0xea, value: Buffer.from('vpce') }];
    const header = proxyV2Header({ ip: '10.0.0.1', port: 4000 }, { ip: '10.0.0.2', port: 443 }, tlvs)!;
    assert.deepEqual(readProxyHeader(header, strict), { state: 'done', version: 'v2', length: header.length, local: false, source: { ip: '10.0.0.1', port: 4000 }, destination: { ip: '10.0.0.2', port: 443 }, tlvs });
    assert.deepEqual([...proxyV2LocalHeader().subarray(12)], [0x20, 0x00, 0x00, 0x00]);
    assert.equal(proxyV2Header({ ip: '1.2.3.4', port: 1 }, { ip: '5.6.7.8', port: 2 }, [{ type: 1, value: Buffer.alloc(0xfff0) }, { type: 2, value: Buffer.alloc(0x10) }]), undefined);
  });
});

describe('address text', () => {
  it('prints IPv6 as inet_ntop does', () => {
    for (const text of ['::', '::1', '1:2:3::4', '1::', 'fe80::1:0:0:1', '1:0:0:2::3', '::ffff:1.2.3.4', '1:2:3:4:5:6:7:8']) assert.equal(ipv6Text(ipBytes(text)!), text);
    assert.equal(ipv6Text(ipBytes('1:0:0:0:2:0:0:3')!), '1::2:0:0:3');
    assert.equal(ipv6Text(ipBytes('0:0:1:0:0:0:0:0')!), '0:0:1::');
  });

  it('replaces each byte of a malformed UTF-8 sequence with "!" (Envoy\'s sanitizeUtf8String)', () => {
    const b = Buffer.concat([Buffer.from('valid_prefix'), Buffer.from([0xc3, 0xc7]), Buffer.from('valid_middle'), Buffer.from([0xc4]), Buffer.from('valid_suffix')]);
    assert.equal(sanitizeUtf8(b), 'valid_prefix!!valid_middle!valid_suffix');
    assert.equal(sanitizeUtf8(Buffer.from('héllo ✓')), 'héllo ✓');
  });
});

describe('proxy_proto stats tags', () => {
  it('extracts the stat prefix and the version as Envoy\'s tag extractors do', async () => {
    const { extractTags } = await import('../shared/stats/tags.js');
    assert.deepEqual(extractTags('proxy_proto.not_found_disallowed'), { extracted: 'proxy_proto.not_found_disallowed', tags: [] });
    assert.deepEqual(extractTags('proxy_proto.test_stat_prefix.not_found_disallowed'), { extracted: 'proxy_proto.not_found_disallowed', tags: [['envoy.proxy_protocol_prefix', 'test_stat_prefix']] });
    assert.deepEqual(extractTags('proxy_proto.versions.v2.error'), { extracted: 'proxy_proto.error', tags: [['envoy.proxy_protocol_version', '2']] });
    assert.deepEqual(extractTags('proxy_proto.test_stat_prefix.versions.v2.error'), {
      extracted: 'proxy_proto.error',
      tags: [['envoy.proxy_protocol_version', '2'], ['envoy.proxy_protocol_prefix', 'test_stat_prefix']],
    });
  });
});
