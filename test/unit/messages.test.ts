import { EventEmitter } from 'node:events';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { InvalidArgumentError, RedisLock, Redlock } from '../../src/index.js';
import { describe as describeValue } from '../../src/shared/describe.js';

function refusal(fn: () => unknown): InvalidArgumentError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidArgumentError);
    return error as InvalidArgumentError;
  }
  throw new Error('expected an InvalidArgumentError');
}

class Item {}
class Widget {}

describe('describe() names a bad value with the right article', () => {
  it.each([
    [{}, 'an object'],
    [Object.create(null), 'an object'],
    [new EventEmitter(), 'an EventEmitter'],
    [new Error('x'), 'an Error'],
    [new Item(), 'an Item'],
    [new Widget(), 'a Widget'],
    [new Map(), 'a Map'],
    [new Uint8Array(1), 'a Uint8Array'],
    [new URL('redis://h'), 'a URL'],
    [[], 'an empty array'],
    [['a'], 'an array'],
    [() => 1, 'a function'],
    [Symbol('s'), 'a symbol'],
    [null, 'null'],
    [undefined, 'undefined'],
    [42, '42'],
    [5n, '5n'],
    ['42', '"42"'],
  ])('%o is %s', (value, expected) => {
    expect(describeValue(value)).toBe(expected);
  });
});

describe('clients passed the wrong way round', () => {
  // lazyConnect: nothing here needs a server.
  const client = new Redis({ lazyConnect: true });
  const other = new Redis({ lazyConnect: true });
  afterAll(() => {
    client.disconnect();
    other.disconnect();
  });

  it('new Redlock(client) says the array is missing, not "an EventEmitter"', () => {
    const error = refusal(() => new Redlock(client as never));
    expect(error.argument).toBe('clients');
    expect(error.message).toBe(
      'Invalid clients: expected a non-empty array of clients (ioredis or node-redis), got a client, not an array of them (new Redlock([client]), or new RedisLock(client) for one node)',
    );
  });

  it('new Redlock({}) and new Redlock([]) say what they got', () => {
    expect(refusal(() => new Redlock({} as never)).message).toBe('Invalid clients: expected a non-empty array of clients (ioredis or node-redis), got an object');
    expect(refusal(() => new Redlock([])).message).toBe('Invalid clients: expected a non-empty array of clients (ioredis or node-redis), got an empty array');
  });

  it('new RedisLock([a, b]) and new Redlock([clients]) point to Redlock(clients)', () => {
    const expected = 'expected an ioredis client (Redis or Cluster), a node-redis client (createClient, createCluster or createSentinel) or a Valkey GLIDE client, got an array of clients (for several nodes: new Redlock(clients))';
    expect(refusal(() => new RedisLock([client, other] as never)).message).toBe(`Invalid client: ${expected}`);
    expect(refusal(() => new Redlock([[client, other]] as never)).message).toBe(`Invalid clients[0]: ${expected}`);
  });

  it('a non-client entry is described, with its article', () => {
    expect(refusal(() => new Redlock([client, new EventEmitter()] as never)).message).toBe(
      'Invalid clients[1]: expected an ioredis client (Redis or Cluster), a node-redis client (createClient, createCluster or createSentinel) or a Valkey GLIDE client, got an EventEmitter',
    );
    expect(refusal(() => new RedisLock({} as never)).message).toBe('Invalid client: expected an ioredis client (Redis or Cluster), a node-redis client (createClient, createCluster or createSentinel) or a Valkey GLIDE client, got an object');
  });
});
