/** Which of the other systems' servers this machine has, and for each one missing, what to install. */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { postgresBin } from './postgres.js';

export type SystemName = 'etcd' | 'zookeeper' | 'postgres';

const runs = (command: string, args: string[]) => spawnSync(command, args, { stdio: 'ignore' }).status === 0;

/** undefined when `system` can be started here, else why not (with the package to install). */
export function missingReason(system: SystemName): string | undefined {
  switch (system) {
    case 'etcd':
      return runs('etcd', ['--version']) ? undefined : "etcd is not installed (Debian: apt-get install etcd-server; or run scripts/setup-systems.sh)";
    case 'zookeeper':
      if (!existsSync('/usr/share/java/zookeeper.jar')) return 'ZooKeeper is not installed (Debian: apt-get install zookeeper; or run scripts/setup-systems.sh)';
      return runs('java', ['-version']) ? undefined : 'java is not installed (Debian: apt-get install default-jre-headless)';
    case 'postgres':
      return postgresBin() === undefined ? 'Postgres is not installed (Debian: apt-get install postgresql; or run scripts/setup-systems.sh)' : undefined;
  }
}
