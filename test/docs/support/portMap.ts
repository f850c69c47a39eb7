/** The ports a docs example writes (a user's localhost:6379..6383) and the ones the test started instead. */

export const EXAMPLE_PORTS = [6379, 6380, 6381, 6382, 6383] as const;
const LOCAL_HOSTS = new Set([undefined, '', 'localhost', '127.0.0.1', '::1']);

export type PortMap = ReadonlyMap<number, number>;

/** `6379=41001,6380=41002` → 6379 → 41001, 6380 → 41002. */
export function parsePortMap(text: string): PortMap {
  const map = new Map<number, number>();
  for (const pair of text.split(',').filter((part) => part !== '')) {
    const [from, to] = pair.split('=').map(Number);
    if (from === undefined || to === undefined || !Number.isInteger(from) || !Number.isInteger(to)) throw new Error(`bad port pair ${pair}`);
    map.set(from, to);
  }
  return map;
}

export function formatPortMap(actual: readonly number[]): string {
  return EXAMPLE_PORTS.slice(0, actual.length)
    .map((port, i) => `${port}=${actual[i]}`)
    .join(',');
}

/** Where a connection to `host`:`port` goes instead, or undefined to leave it alone. */
export function mapPort(map: PortMap, host: string | undefined, port: number | string | undefined): { host: string; port: number } | undefined {
  if (!LOCAL_HOSTS.has(host)) return undefined;
  // A client without a port means Redis's default.
  const to = map.get(port === undefined ? 6379 : Number(port));
  return to === undefined ? undefined : { host: '127.0.0.1', port: to };
}
