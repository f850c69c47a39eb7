import type { Command, Redis } from 'ioredis';
import type { SharedCall, SharedCallSender } from '../../scripts/LuaScript.js';

/**
 * A batch of renewals goes to every node as the same script calls of 100
 * keys each. Through `evalsha`, ioredis copied each call's arguments with
 * Array.prototype.flat (~100 ns an argument here) and framed every one of
 * them into a string of its own, once per node: ~20 µs a call, five times
 * over on five nodes. Here a call is framed once, for every node, and each
 * node's Command only carries it.
 */
interface Encoded {
  readonly argv: string[];
  /**
   * The call as written, in a Buffer: converted to UTF-8 once, not once
   * per socket, and held outside V8's heap while the nodes answer (a
   * string of ~8 KB per call, kept by five commands until their replies,
   * outlived the young generation when V8 had shrunk it).
   */
  readonly bytes: Buffer;
}

const encodings = new WeakMap<SharedCall, Encoded>();

type CommandClass = typeof Command;
/** One subclass per ioredis Command class (one per copy of ioredis the process loaded). */
const preparedClasses = new WeakMap<CommandClass, new (encoded: Encoded) => Command>();

/**
 * EVALSHA of shared calls on `client`, or undefined where ioredis would
 * change what it sends or how (a key prefix, auto-pipelining, friendly
 * error stacks): those go through `evalsha` as any other script call.
 *
 * The Command class is the one of the user's copy of ioredis, taken from
 * the first call it made through `evalsha` here: quorumlock does not load
 * ioredis itself (an optional peer), and a client does not lead to it
 * (Redis's prototype has EventEmitter's constructor, mixed in).
 */
export function sharedCallSender(client: Redis): SharedCallSender | undefined {
  const { keyPrefix, enableAutoPipelining, showFriendlyErrorStack } = client.options;
  if (keyPrefix || enableAutoPipelining || showFriendlyErrorStack) return undefined;
  let Prepared: (new (encoded: Encoded) => Command) | undefined;
  return (sha, call) => {
    if (Prepared !== undefined) return client.sendCommand(new Prepared(encode(sha, call))) as Promise<unknown>;
    const sent = client.evalsha(sha, call.keys.length, ...call.keys, ...call.args);
    Prepared = preparedClassOf(lastCommandOf(client)?.constructor as CommandClass | undefined);
    return sent;
  };
}

/** The command `client` queued last: the one it just wrote, or queued while it connects. */
function lastCommandOf(client: Redis): { name?: unknown } | undefined {
  const queues = client as unknown as Partial<Record<'commandQueue' | 'offlineQueue', { peekBack?(): { command?: { name?: unknown } } | undefined }>>;
  for (const queue of [queues.commandQueue, queues.offlineQueue]) {
    const command = queue?.peekBack?.()?.command;
    if (command?.name === 'evalsha') return command;
  }
  return undefined;
}

function preparedClassOf(Base: CommandClass | undefined): (new (encoded: Encoded) => Command) | undefined {
  if (typeof Base !== 'function' || typeof Base.prototype.toWritable !== 'function') return undefined;
  let Prepared = preparedClasses.get(Base);
  if (Prepared === undefined) {
    Prepared = class PreparedEvalsha extends Base {
      readonly #bytes: Buffer;

      constructor(encoded: Encoded) {
        // Made with no arguments (nothing to flatten), then given the call's: ioredis reads them
        // when it traces or logs the command, and a Cluster would for the slot (never used there).
        super('evalsha', [], { replyEncoding: 'utf8' });
        this.args = encoded.argv;
        this.#bytes = encoded.bytes;
      }

      override toWritable(): Buffer {
        return this.#bytes;
      }
    };
    preparedClasses.set(Base, Prepared);
  }
  return Prepared;
}

/** The call as ioredis would write it (RESP: an array of bulk strings, in UTF-8), once per call. */
export function encode(sha: string, call: SharedCall): Encoded {
  let encoded = encodings.get(call);
  if (encoded !== undefined && encoded.argv[0] === sha) return encoded;
  const argv: string[] = [sha, String(call.keys.length)];
  for (const key of call.keys) argv.push(key);
  for (const arg of call.args) argv.push(String(arg));
  let text = `*${argv.length + 1}\r\n$7\r\nevalsha\r\n`;
  for (const arg of argv) text += `$${Buffer.byteLength(arg)}\r\n${arg}\r\n`;
  encoded = { argv, bytes: Buffer.from(text) };
  encodings.set(call, encoded);
  return encoded;
}
