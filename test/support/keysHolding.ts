import type { Redis } from 'ioredis';

/**
 * The keys on this node whose content names any of `values` (a lock's
 * value): a mutex's or a semaphore slot's string, a reader's hash or sorted
 * set member, a waiter's place in a line. Whatever the primitive keeps, a
 * lock that is gone leaves none of them.
 */
export async function keysHolding(client: Redis, values: readonly string[]): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'COUNT', 1000);
    cursor = next;
    for (const key of keys) {
      const content = await contentOf(client, key);
      if (values.some((value) => content.includes(value))) found.push(key);
    }
  } while (cursor !== '0');
  return found;
}

async function contentOf(client: Redis, key: string): Promise<string> {
  switch (await client.type(key)) {
    case 'string':
      return (await client.get(key)) ?? '';
    case 'hash':
      return (await client.hgetall(key).then(Object.entries)).flat().join(' ');
    case 'zset':
      return (await client.zrange(key, 0, -1)).join(' ');
    case 'set':
      return (await client.smembers(key)).join(' ');
    case 'list':
      return (await client.lrange(key, 0, -1)).join(' ');
    default:
      return '';
  }
}
