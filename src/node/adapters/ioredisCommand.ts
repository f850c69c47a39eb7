import { createRequire } from 'node:module';

/** The part of ioredis's Command class (public, for custom commands) that an encoded send needs. */
export type CommandClass = new (
  name: string,
  args: (string | number)[],
  options: { replyEncoding: 'utf8' },
) => { readonly promise: Promise<unknown>; toWritable(socket: unknown): string | Buffer };

interface IoredisModule {
  readonly Redis?: unknown;
  readonly Command?: unknown;
}

let resolved: IoredisModule | null | undefined;

/**
 * ioredis's Command class, from the copy of ioredis that quorumlock itself
 * resolves, if `client` is a Redis of that copy (a client's own
 * `constructor` is EventEmitter in ioredis, so the class cannot be reached
 * from the client). Undefined otherwise (ioredis not resolvable from here,
 * another copy of it, or a Cluster): commands then go through the client's
 * methods.
 */
export function commandClassOf(client: object): CommandClass | undefined {
  if (resolved === undefined) {
    try {
      resolved = createRequire(import.meta.url)('ioredis') as IoredisModule;
    } catch {
      resolved = null;
    }
  }
  const { Redis, Command } = resolved ?? {};
  if (typeof Redis !== 'function' || !(client instanceof Redis)) return undefined;
  const prototype = (Command as { prototype?: { toWritable?: unknown } } | undefined)?.prototype;
  return typeof Command === 'function' && typeof prototype?.toWritable === 'function' ? (Command as CommandClass) : undefined;
}
