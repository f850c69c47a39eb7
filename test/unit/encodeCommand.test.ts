import { Command } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { encodeCommand } from '../../src/scripts/encodeCommand.js';

/** What ioredis itself writes for the command. */
function ioredisBytes(name: string, args: (string | number)[]): Buffer {
  const writable = new Command(name, args).toWritable(undefined as never);
  return Buffer.isBuffer(writable) ? writable : Buffer.from(writable);
}

describe('encodeCommand', () => {
  it('encodes a command as ioredis does, byte for byte', () => {
    const args = ['0123456789abcdef0123456789abcdef01234567', 3, 'key:1', 'ключ:2', 'κλειδί', 'same', 60_000, '', 'a\r\nb'];
    expect(Buffer.from(encodeCommand(['evalsha', ...args]))).toEqual(ioredisBytes('evalsha', args));
  });

  it('counts bytes, not characters, in each length', () => {
    expect(Buffer.from(encodeCommand(['GET', 'é'])).toString('latin1')).toBe('*2\r\n$3\r\nGET\r\n$2\r\n\xc3\xa9\r\n');
  });
});
