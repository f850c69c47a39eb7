import { type CliFailure, usageFailure } from './failure.js';

/** The environment variable read when no --redis is given. */
export const URLS_ENV = 'QUORUMLOCK_REDIS_URLS';

/** One Redis node as the user named it. */
export interface NodeAddress {
  /** The URL as given (it may carry a password: never print it). */
  readonly url: string;
  /** `host:port`, safe to print; the same label the library gives the node. */
  readonly label: string;
  /** The URL with its password hidden, safe to print. */
  readonly shownUrl: string;
  /** Where the user gave it, as usage errors name it: `--redis #2`, `QUORUMLOCK_REDIS_URLS`. */
  readonly argument: string;
}

/**
 * The nodes to lock on: every --redis flag, or else the comma-separated
 * QUORUMLOCK_REDIS_URLS. There is no default: two hosts that each fell back
 * to their own localhost would both "hold" the same lock.
 */
export function resolveNodeAddresses(flags: readonly string[], env: string | undefined): NodeAddress[] {
  const fromFlags = flags.length > 0;
  const source = fromFlags ? '--redis' : URLS_ENV;
  const urls = fromFlags
    ? flags
    : (env ?? '')
        .split(',')
        .map((url) => url.trim())
        .filter((url) => url !== '');
  if (urls.length === 0) {
    throw usageFailure('--redis', `no Redis node given: pass --redis URL (repeat it for a quorum) or set ${URLS_ENV}`);
  }
  const byLabel = new Map<string, NodeAddress>();
  return urls.map((url, index) => {
    const argument = urls.length > 1 ? `${source} #${index + 1}` : source;
    const address = { url, argument, ...parseNodeUrl(url, argument) };
    const first = byLabel.get(address.label);
    // Names that differ but reach one server are caught once connected (distinctServers.ts).
    if (first !== undefined) throw sameServerFailure(first, address, `both name ${address.label}`);
    byLabel.set(address.label, address);
    return address;
  });
}

/** One server named twice would count its vote twice: the lock would contend with itself. */
export function sameServerFailure(first: NodeAddress, second: NodeAddress, evidence: string): CliFailure {
  return usageFailure(
    second.argument,
    `${second.shownUrl} is the same Redis server as ${first.argument} (${first.shownUrl}): ${evidence}; ` +
      'each node must be an independent server, or its vote counts twice',
  );
}

function parseNodeUrl(text: string, argument: string): Pick<NodeAddress, 'label' | 'shownUrl'> {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw usageFailure(argument, `expected a URL like redis://host:6379, got ${JSON.stringify(redact(text))}`);
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') {
    throw usageFailure(argument, `expected a redis:// or rediss:// URL, got ${url.protocol}//…`);
  }
  if (url.hostname === '') throw usageFailure(argument, 'the URL has no host');
  return { label: `${url.hostname}:${url.port === '' ? '6379' : url.port}`, shownUrl: withoutPassword(url) };
}

/** The query is left out too: ioredis reads options such as a password from it. */
function withoutPassword(url: URL): string {
  const credentials = url.password !== '' ? `${url.username}:…@` : url.username !== '' ? `${url.username}@` : '';
  return `${url.protocol}//${credentials}${url.host}${url.pathname}`;
}

/** Hides a password in text that failed to parse as a URL. */
function redact(text: string): string {
  return text.replace(/\/\/[^@/]*@/, '//…@');
}
