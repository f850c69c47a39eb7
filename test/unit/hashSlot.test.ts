import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../src/shared/errors.js';
import { assertFencingKeysShareSlot, assertSameHashSlot } from '../../src/node/hashSlot.js';

describe('hash slot checks for Redis Cluster', () => {
  it('accepts keys that share a hash tag', () => {
    expect(() => assertSameHashSlot(['{order:42}:stock', '{order:42}:payment'], 'resources')).not.toThrow();
  });

  it('names the first key that lands in another slot', () => {
    try {
      assertSameHashSlot(['{order:42}:stock', '{order:42}:payment', 'order:43'], 'resources');
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect((error as InvalidArgumentError).argument).toBe('resources[2]');
      expect((error as Error).message).toMatch(/"order:43" is in hash slot/);
    }
  });

  it('refuses to fence a resource whose counter cannot share its slot', () => {
    expect(() => assertFencingKeysShareSlot(['orders:42', '{user}:cart'], 'resources')).not.toThrow();
    expect(() => assertFencingKeysShareSlot(['ok', 'a{}b'], 'resources')).toThrow(/resources\[1\]/);
  });
});
