import type { ClientAdapter } from '../ClientAdapter.js';

/**
 * A Valkey GLIDE client (`@valkey/valkey-glide` 2: GlideClient or
 * GlideClusterClient), as far as quorumlock uses it.
 */
export interface GlideClient {
  /** Sends one raw command. */
  customCommand(args: string[], options?: object): Promise<unknown>;
  /** Runs a GLIDE `Script`. */
  invokeScript(script: never, options?: never): Promise<unknown>;
  /** Closes the client. */
  close(errorMessage?: string): void;
}

/** GLIDE sends raw commands with customCommand and runs scripts with invokeScript (neither ioredis nor node-redis has them). */
export function isGlideClient(value: unknown): value is GlideClient {
  const candidate = value as Partial<Record<'customCommand' | 'invokeScript', unknown>> | null | undefined;
  return typeof candidate?.customCommand === 'function' && typeof candidate.invokeScript === 'function';
}

/**
 * GLIDE: raw commands through customCommand; on a cluster each goes to the
 * primary of its first key's slot. A client is connected once created, and
 * reconnects by itself. What it does not offer is left out, so the layer
 * above falls back: no dedicated subscriber connection (a new client would
 * need the user's configuration, which GLIDE does not expose), so waiters
 * poll instead of hearing releases; no WAIT, since a reconnection cannot be
 * told apart (syncReplicas is refused for the node).
 */
export function glideAdapter(client: GlideClient): ClientAdapter {
  const cluster = typeof (client as { invokeScriptWithRoute?: unknown }).invokeScriptWithRoute === 'function';
  const send = (args: string[], firstKey: string | undefined): Promise<unknown> =>
    (cluster && firstKey !== undefined ? client.customCommand(args, { route: { type: 'primarySlotKey', key: firstKey } }) : client.customCommand(args)).catch(
      asRedisError,
    );
  const withKeys = (command: string, head: string, numberOfKeys: number, keysAndArgs: readonly (string | number)[]): Promise<unknown> => {
    const args = [command, head, String(numberOfKeys)];
    for (const part of keysAndArgs) args.push(String(part));
    return send(args, numberOfKeys > 0 ? args[3] : undefined);
  };
  return {
    name: cluster ? 'glide cluster' : 'glide',
    isCluster: cluster,
    keyPrefix: '',
    connecting: ALWAYS_READY,
    commands: {
      evalsha: (sha, numberOfKeys, ...keysAndArgs) => withKeys('EVALSHA', sha, numberOfKeys, keysAndArgs),
      eval: (source, numberOfKeys, ...keysAndArgs) => withKeys('EVAL', source, numberOfKeys, keysAndArgs),
      set: (key, value, px, ttlMs, nx) => send(['SET', key, value, px, String(ttlMs), nx], key),
    },
    beforeWrite: undefined,
    wait: undefined,
    syncSource: undefined,
    connectionMark: () => undefined,
    subscriber: undefined,
  };
}

/** GLIDE is connected once createClient() resolved; it has no connection events to wait for. */
const ALWAYS_READY: ClientAdapter['connecting'] = {
  status: 'ready',
  once: () => ALWAYS_READY as never,
  off: () => ALWAYS_READY as never,
  connect: () => Promise.resolve(),
};

/**
 * GLIDE words a server error as "An error was signalled by the server: -
 * NoScriptError: …"; the script fallback looks for the Redis error code in
 * front, as the server sends it.
 */
function asRedisError(error: unknown): never {
  if (error instanceof Error && /NoScriptError/.test(error.message) && !error.message.startsWith('NOSCRIPT')) {
    throw new Error(`NOSCRIPT ${error.message}`, { cause: error });
  }
  throw error;
}
