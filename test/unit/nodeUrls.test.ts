import { describe, expect, it } from 'vitest';
import { resolveNodeAddresses } from '../../src/cli/nodeUrls.js';

describe('redis+sentinel:// node URLs', () => {
  it('name the master and its sentinels, with the label the library gives such a node', () => {
    const [node] = resolveNodeAddresses(['redis+sentinel://10.0.0.1:26379,10.0.0.2,[::1]:26380/orders/2'], undefined);
    expect(node?.sentinel).toEqual({
      sentinels: [
        { host: '10.0.0.1', port: 26379 },
        { host: '10.0.0.2', port: 26379 },
        { host: '::1', port: 26380 },
      ],
      name: 'orders',
      db: 2,
      tls: false,
    });
    expect(node?.label).toBe('orders via sentinels 10.0.0.1:26379,10.0.0.2:26379,::1:26380');
  });

  it('take credentials for the master, and never show the password', () => {
    const [node] = resolveNodeAddresses(['rediss+sentinel://app:s%40cret@s1:1/m'], undefined);
    expect(node?.sentinel).toMatchObject({ username: 'app', password: 's@cret', tls: true });
    expect(node?.shownUrl).toBe('rediss+sentinel://app:…@s1:1/m');
  });

  it('keep their commas inside QUORUMLOCK_REDIS_URLS', () => {
    const nodes = resolveNodeAddresses([], 'redis+sentinel://a:1,b:2/g1, redis://c:3 ,redis+sentinel://d:4,e:5/g2');
    expect(nodes.map((node) => node.label)).toEqual(['g1 via sentinels a:1,b:2', 'c:3', 'g2 via sentinels d:4,e:5']);
    expect(nodes.map((node) => node.argument)).toEqual(['QUORUMLOCK_REDIS_URLS #1', 'QUORUMLOCK_REDIS_URLS #2', 'QUORUMLOCK_REDIS_URLS #3']);
  });

  it.each([
    ['redis+sentinel://a:1,b:2', /names no master: add \/MASTER-NAME/],
    ['redis+sentinel://a:1/', /names no master/],
    ['redis+sentinel://a:x/m', /expected host or host:port for a sentinel, got "a:x"/],
    ['redis+sentinel://a:1/m/x', /expected a database number after the master's name, got "x"/],
    ['redis+sentinel://u:secret@a:1/m?x=1', /expected a URL like redis\+sentinel:\/\/host:26379,host:26379\/mymaster, got "redis\+sentinel:\/\/…@a:1\/m\?x=1"/],
  ])('refuse %s, naming the problem', (url, message) => {
    expect(() => resolveNodeAddresses([url], undefined)).toThrow(message);
  });

  it('refuse the same master through the same sentinels twice', () => {
    expect(() => resolveNodeAddresses(['redis+sentinel://a:1/m', 'redis+sentinel://a:1/m/0'], undefined)).toThrow(/both name m via sentinels a:1/);
  });
});
