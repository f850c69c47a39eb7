/**
 * Clients for one contender on one set of nodes (plain ioredis or node-redis
 * defaults, as a user would create them), with a count of the requests the
 * library sends through them: its round trips.
 */
import { Redis } from 'ioredis';
import { createClient } from 'redis';

/** Which client a contender's library is given: ioredis unless it says otherwise. */
export type ClientKind = 'ioredis' | 'node-redis';

export type NodeRedisClient = ReturnType<typeof createClient>;

export interface ClientGroup {
  /** node-redis clients in the group of a contender whose `client` is 'node-redis' (see there). */
  readonly clients: readonly Redis[];
  /** Requests sent through these clients so far. */
  requests(): number;
  /** Resolves once no client waits for a reply (a quorum library's slowest nodes answer after its call returned). */
  quiet(): Promise<void>;
  close(): void;
}

/** How long quiet() waits at most: replies on loopback come within microseconds. */
const QUIET_LIMIT_MS = 100;

export async function openClients(urls: readonly string[], kind: ClientKind = 'ioredis'): Promise<ClientGroup> {
  if (kind === 'node-redis') return openNodeRedisClients(urls);
  let sent = 0;
  const clients = urls.map((url) => {
    const client = new Redis(url);
    // Every command of an ioredis client, scripts included, goes through
    // sendCommand; counting there costs one increment.
    const send = client.sendCommand.bind(client);
    client.sendCommand = ((...args: Parameters<Redis['sendCommand']>) => {
      sent++;
      return send(...args);
    }) as Redis['sendCommand'];
    return client;
  });
  try {
    await Promise.all(clients.map((client) => waitReady(client)));
  } catch (error) {
    for (const client of clients) client.disconnect();
    throw error;
  }
  return {
    clients,
    requests: () => sent,
    async quiet() {
      const until = performance.now() + QUIET_LIMIT_MS;
      while (clients.some((client) => client.commandQueue.length > 0) && performance.now() < until) {
        await new Promise((resolve) => setImmediate(resolve));
      }
    },
    close() {
      for (const client of clients) client.disconnect();
    },
  };
}

async function openNodeRedisClients(urls: readonly string[]): Promise<ClientGroup> {
  let sent = 0;
  let pending = 0;
  const clients = urls.map((url) => {
    const client = createClient({ url });
    // Typed commands and raw ones alike end in the instance's sendCommand (the
    // client a user holds is a prototype-linked view of it), so counting there
    // sees every request, and the replies still due.
    const instance = (client as unknown as { _self: { sendCommand: (...args: unknown[]) => Promise<unknown> } })._self;
    const send = instance.sendCommand.bind(instance);
    instance.sendCommand = (...args: unknown[]) => {
      sent++;
      pending++;
      return send(...args).finally(() => void pending--);
    };
    return client;
  });
  try {
    await Promise.all(clients.map((client) => client.connect()));
  } catch (error) {
    for (const client of clients) client.destroy();
    throw new Error(`cannot connect to Redis: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  return {
    clients: clients as unknown as Redis[],
    requests: () => sent,
    async quiet() {
      const until = performance.now() + QUIET_LIMIT_MS;
      while (pending > 0 && performance.now() < until) await new Promise((resolve) => setImmediate(resolve));
    },
    close() {
      for (const client of clients) client.destroy();
    },
  };
}

/** An admin client for INFO and the like, outside any contender's count. */
export async function openAdminClient(url: string): Promise<Redis> {
  const client = new Redis(url, { maxRetriesPerRequest: 1 });
  try {
    await waitReady(client);
  } catch (error) {
    client.disconnect();
    throw error;
  }
  return client;
}

function waitReady(client: Redis): Promise<void> {
  if (client.status === 'ready') return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onReady = (): void => {
      client.off('error', onError);
      resolve();
    };
    const onError = (error: Error): void => {
      client.off('ready', onReady);
      reject(new Error(`cannot connect to Redis: ${error.message}`, { cause: error }));
    };
    client.once('ready', onReady);
    client.once('error', onError);
  });
}
