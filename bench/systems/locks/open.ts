/** Opens the system a SystemSpec names, in this process. */
import { openEtcd } from './etcd.js';
import { openPostgres } from './postgres.js';
import { openRedis } from './redis.js';
import type { LockSystem, SystemSpec } from './types.js';
import { openZooKeeper } from './zookeeper.js';

export function openSystem(spec: SystemSpec): Promise<LockSystem> {
  switch (spec.system) {
    case 'etcd':
      return openEtcd(spec.endpoints, spec.ttlSec);
    case 'zookeeper':
      return openZooKeeper(spec.connectString, spec.sessionTimeoutMs);
    case 'postgres':
      return openPostgres(spec.url);
    case 'redis':
      return openRedis(spec);
  }
}
