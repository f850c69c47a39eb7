/**
 * Entry point for tests that need real Redis nodes.
 *
 *   // Faults needed (kill/pause/restart/proxy): always local processes.
 *   const set = await startNodes(5);
 *   const clients = set.clients({ commandTimeout: 500 });
 *   await set.node(0).kill();
 *   afterAll(() => set.stopAll());
 *
 *   // No faults needed: containers when QUORUMLOCK_PROVIDER=containers and Docker is up.
 *   const provider = await pickProvider();
 *   const set = await provider.start(3);
 *
 * Every redis-server process is also registered for a synchronous SIGKILL when
 * the test process exits (processRegistry.ts).
 */
import { execFile } from 'node:child_process';
import { containerProvider } from './containerProvider.js';
import { localProvider, type LocalNodeSet } from './localProvider.js';
import type { NodeSet, RedisProvider, StartOptions } from './nodeSet.js';

export { defaultClientOptions, urlOf } from './nodeSet.js';
export type { NodeEndpoint, NodeSet, RedisProvider, StartOptions } from './nodeSet.js';
export { localProvider, LocalNodeSet } from './localProvider.js';
export { containerProvider, ContainerNodeSet } from './containerProvider.js';
export { livePids } from './processRegistry.js';

/** Start `n` local redis-server processes (fault injection available). */
export function startNodes(n: number, options: StartOptions = {}): Promise<LocalNodeSet> {
  return localProvider.start(n, options);
}

export function isLocal(set: NodeSet): set is LocalNodeSet {
  return set.provider === 'local';
}

let dockerCheck: Promise<string | undefined> | undefined;
let fallbackReported = false;

/**
 * The container provider when QUORUMLOCK_PROVIDER=containers and a Docker
 * engine answers; otherwise the local one (saying why, once, when containers
 * were asked for).
 */
export async function pickProvider(env: NodeJS.ProcessEnv = process.env): Promise<RedisProvider> {
  if (env['QUORUMLOCK_PROVIDER'] !== 'containers') return localProvider;
  dockerCheck ??= dockerUnavailableReason();
  const reason = await dockerCheck;
  if (reason === undefined) return containerProvider;
  if (!fallbackReported) {
    fallbackReported = true;
    console.warn(`[quorumlock tests] QUORUMLOCK_PROVIDER=containers, but ${reason}; using local redis-server processes.`);
  }
  return localProvider;
}

/** undefined when a Docker engine is reachable, else why not. */
async function dockerUnavailableReason(): Promise<string | undefined> {
  const cli = await new Promise<{ ok: boolean; missing: boolean; detail: string }>((resolve) => {
    execFile('docker', ['info', '--format', '{{.ServerVersion}}'], { timeout: 5000 }, (err, stdout, stderr) => {
      if (err === null) {
        resolve({ ok: stdout.trim() !== '', missing: false, detail: stdout.trim() });
        return;
      }
      const code = (err as NodeJS.ErrnoException).code;
      const firstLine = String(stderr).trim().split('\n')[0] ?? '';
      resolve({ ok: false, missing: code === 'ENOENT', detail: firstLine !== '' ? firstLine : err.message });
    });
  });
  if (cli.ok) return undefined;
  if (!cli.missing) return `no Docker engine is reachable (docker info: ${cli.detail})`;
  // No docker CLI: ask testcontainers itself (it also finds DOCKER_HOST, Podman, ...).
  try {
    const { getContainerRuntimeClient } = await import('testcontainers');
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('timed out')), 10_000);
    });
    try {
      await Promise.race([getContainerRuntimeClient(), timeout]);
    } finally {
      clearTimeout(timer);
    }
    return undefined;
  } catch (err) {
    return `no container runtime found (${err instanceof Error ? err.message : String(err)})`;
  }
}
