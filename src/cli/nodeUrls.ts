import { usageFailure } from './failure.js';

/** The environment variable read when no --redis is given. */
export const URLS_ENV = 'QUORUMLOCK_REDIS_URLS';

/** One Redis node as the user named it. */
export interface NodeAddress {
  /** The URL as given (it may carry a password: never print it). */
  readonly url: string;
  /** `host:port`, safe to print; the same label the library gives the node. */
  readonly label: string;
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
  const byLabel = new Map<string, number>();
  return urls.map((url, index) => {
    const argument = urls.length > 1 ? `${source} #${index + 1}` : source;
    const label = labelOf(url, argument);
    const first = byLabel.get(label);
    if (first !== undefined) {
      // The same server twice would count its vote twice.
      throw usageFailure(argument, `${label} is already node #${first + 1}; each node must be an independent server`);
    }
    byLabel.set(label, index);
    return { url, label };
  });
}

function labelOf(text: string, argument: string): string {
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
  return `${url.hostname}:${url.port === '' ? '6379' : url.port}`;
}

/** Hides a password in text that failed to parse as a URL. */
function redact(text: string): string {
  return text.replace(/\/\/[^@/]*@/, '//…@');
}
