import { createHash } from 'node:crypto';

/** The part of an ioredis client (Redis or Cluster) that runs scripts. */
export interface ScriptClient {
  evalsha(sha: string, numberOfKeys: number, ...keysAndArgs: (string | number)[]): Promise<unknown>;
  eval(source: string, numberOfKeys: number, ...keysAndArgs: (string | number)[]): Promise<unknown>;
}

/** Per script client: how many scripts were resent in full on it after NOSCRIPT. */
const resends = new WeakMap<ScriptClient, number>();

/**
 * How many scripts were resent in full after NOSCRIPT on `client`, so far.
 * A resent script runs after whatever was sent behind its EVALSHA on that
 * client (a replica WAIT): a change in this count tells that such a follower
 * may have run before the write it was meant to follow. Counted per client:
 * a resend on another connection (another node's first script) says nothing
 * of this one's WAIT. One count for the process sent a second WAIT, and a
 * write waited twice the sync timeout, whenever any other client's first
 * script ran meanwhile (three synced cases at once timed out so under load).
 */
export function scriptResends(client: ScriptClient): number {
  return resends.get(client) ?? 0;
}

/** Per script client: who is told each time a script goes out again in full after NOSCRIPT. */
const resendListeners = new WeakMap<ScriptClient, Set<() => void>>();

/**
 * Calls `listener` each time a script is resent in full after NOSCRIPT on
 * `client`, right after the EVAL was written: a command sent from the
 * listener runs after it on that connection. The resend is a new write,
 * behind whatever was sent after its EVALSHA (the undo of an attempt that
 * timed out), and its own reply may never come. Returns what stops it.
 */
export function onScriptResend(client: ScriptClient, listener: () => void): () => void {
  let listeners = resendListeners.get(client);
  if (!listeners) resendListeners.set(client, (listeners = new Set()));
  const own = listeners;
  // Wrapped: the same function registered twice is two registrations.
  const entry = (): void => listener();
  own.add(entry);
  return () => {
    own.delete(entry);
  };
}

/**
 * One Lua script, sent by SHA1 and resent in full only when the node answers
 * NOSCRIPT (after a restart or SCRIPT FLUSH), so the common path costs one
 * short EVALSHA.
 *
 * The script functions chain with then() rather than async/await: each async
 * layer allocated a frame and a promise per node request, together a tenth of
 * quorumlock's own time in a five-node lock cycle and a third of its garbage.
 */
export class LuaScript {
  readonly sha: string;

  constructor(
    readonly name: string,
    readonly source: string,
  ) {
    this.sha = createHash('sha1').update(source).digest('hex');
  }

  /**
   * Runs the script and hands its reply to `read`. Reading and the NOSCRIPT
   * fallback share one then(): a separate catch() was one more promise and
   * one more microtask between the reply and the caller, on every request.
   */
  run<T>(client: ScriptClient, keys: readonly string[], args: readonly (string | number)[], read: (reply: unknown) => T): Promise<T> {
    return client.evalsha(this.sha, keys.length, ...keys, ...args).then(read, (error: unknown) => {
      if (!isNoScriptError(error)) throw error;
      resends.set(client, (resends.get(client) ?? 0) + 1);
      const resent = client.eval(this.source, keys.length, ...keys, ...args);
      const listeners = resendListeners.get(client);
      if (listeners) for (const listener of [...listeners]) listener();
      return resent.then(read);
    });
  }
}

/**
 * The whole source, never the SHA: for requests whose reply may never come
 * back (the undo of an attempt that timed out), where a NOSCRIPT answer would
 * be lost and the fallback never sent.
 */
export function runInline<T>(
  script: LuaScript,
  client: ScriptClient,
  keys: readonly string[],
  args: readonly (string | number)[],
  read: (reply: unknown) => T,
): Promise<T> {
  return client.eval(script.source, keys.length, ...keys, ...args).then(read);
}

/** For the scripts that answer 1 for done and 0 for refused. */
export function isOne(reply: unknown): boolean {
  return reply === 1;
}

function isNoScriptError(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOSCRIPT');
}
