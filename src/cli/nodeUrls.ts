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
  /** For a `redis+sentinel://` URL: the master is found through these sentinels. */
  readonly sentinel?: SentinelTarget;
}

/** A Sentinel-managed master, as a `redis+sentinel://` URL names it. */
export interface SentinelTarget {
  readonly sentinels: readonly { readonly host: string; readonly port: number }[];
  /** The master's name, as the sentinels know it. */
  readonly name: string;
  readonly db: number;
  /** rediss+sentinel://: TLS to the master and to the sentinels. */
  readonly tls: boolean;
  readonly username?: string;
  readonly password?: string;
}

const SENTINEL_PORT = 26379;
/**
 * `redis+sentinel://[user:password@]host[:port][,host[:port]...]/master[/db]`:
 * WHATWG URLs take one host only, so this form is read by hand.
 */
const SENTINEL_URL = /^(rediss?)\+sentinel:\/\/(?:([^@/]*)@)?([^/?#@]+)(?:\/([^/?#]*))?(?:\/([^/?#]*))?$/;

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
    : splitUrlList(env ?? '');
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

/**
 * The comma-separated list of QUORUMLOCK_REDIS_URLS. A sentinel URL lists
 * its sentinels with commas too: a piece after one whose host list has not
 * ended (no `/` yet) is its next sentinel.
 */
function splitUrlList(list: string): string[] {
  const urls: string[] = [];
  for (const piece of list.split(',').map((url) => url.trim())) {
    const last = urls.length - 1;
    if (last >= 0 && /^rediss?\+sentinel:\/\/[^/]*$/.test(urls[last] as string)) urls[last] = `${urls[last]},${piece}`;
    else urls.push(piece);
  }
  return urls.filter((url) => url !== '');
}

/** One server named twice would count its vote twice: the lock would contend with itself. */
export function sameServerFailure(first: NodeAddress, second: NodeAddress, evidence: string): CliFailure {
  return usageFailure(
    second.argument,
    `${second.shownUrl} is the same Redis server as ${first.argument} (${first.shownUrl}): ${evidence}; ` +
      'each node must be an independent server, or its vote counts twice',
  );
}

function parseNodeUrl(text: string, argument: string): Pick<NodeAddress, 'label' | 'shownUrl' | 'sentinel'> {
  if (/^rediss?\+sentinel:/.test(text)) return parseSentinelUrl(text, argument);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw usageFailure(argument, `expected a URL like redis://host:6379, got ${JSON.stringify(redact(text))}`);
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') {
    throw usageFailure(argument, `expected a redis://, rediss:// or redis+sentinel:// URL, got ${url.protocol}//…`);
  }
  if (url.hostname === '') throw usageFailure(argument, 'the URL has no host');
  return { label: `${url.hostname}:${url.port === '' ? '6379' : url.port}`, shownUrl: withoutPassword(url) };
}

function parseSentinelUrl(text: string, argument: string): Pick<NodeAddress, 'label' | 'shownUrl' | 'sentinel'> {
  const match = SENTINEL_URL.exec(text);
  if (match === null) {
    throw usageFailure(argument, `expected a URL like redis+sentinel://host:26379,host:26379/mymaster, got ${JSON.stringify(redact(text))}`);
  }
  const [, scheme = 'redis', credentials, hostList = '', name = '', dbText] = match;
  if (name === '') throw usageFailure(argument, 'the redis+sentinel:// URL names no master: add /MASTER-NAME after the sentinels');
  const sentinels = hostList.split(',').map((entry) => {
    const hostPort = /^([^:\[\]]+|\[[^\]]+\])(?::(\d+))?$/.exec(entry);
    if (hostPort === null) throw usageFailure(argument, `expected host or host:port for a sentinel, got ${JSON.stringify(entry)}`);
    return { host: (hostPort[1] ?? '').replace(/^\[|\]$/g, ''), port: hostPort[2] === undefined ? SENTINEL_PORT : Number(hostPort[2]) };
  });
  const db = dbText === undefined || dbText === '' ? 0 : Number(dbText);
  if (!Number.isInteger(db) || db < 0) throw usageFailure(argument, `expected a database number after the master's name, got ${JSON.stringify(dbText)}`);
  const [username, password] = credentials === undefined ? [] : splitCredentials(credentials);
  const masterName = decodeURIComponent(name);
  const shownCredentials = password !== undefined ? `${username ?? ''}:…@` : username ? `${username}@` : '';
  return {
    // The library's own name for such a node (RedisNodeBackend), so messages agree.
    label: `${masterName} via sentinels ${sentinels.map((s) => `${s.host}:${s.port}`).join(',')}`,
    shownUrl: `${scheme}+sentinel://${shownCredentials}${hostList}/${name}${db === 0 ? '' : `/${db}`}`,
    sentinel: {
      sentinels,
      name: masterName,
      db,
      tls: scheme === 'rediss',
      ...(username ? { username } : {}),
      ...(password !== undefined ? { password } : {}),
    },
  };
}

function splitCredentials(credentials: string): [string | undefined, string | undefined] {
  const colon = credentials.indexOf(':');
  if (colon < 0) return [decodeURIComponent(credentials), undefined];
  return [decodeURIComponent(credentials.slice(0, colon)) || undefined, decodeURIComponent(credentials.slice(colon + 1))];
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
