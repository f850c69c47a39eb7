// One child of the hot-key measurement: `waiters` callers, each taking one
// key `rounds` times with a 1 ms hold. Prints how many critical sections it ran.
import { Redis } from 'ioredis';
import { RedisLock, Redlock } from '../../src/index.js';

const [portsArg = '', waitersArg = '8', roundsArg = '8', key = 'hot'] = process.argv.slice(2);
const clients = portsArg.split(',').map((port) => new Redis({ port: Number(port), host: '127.0.0.1' }));
const locker = clients.length === 1 ? new RedisLock(clients[0]!, { acquireTimeoutMs: 120_000 }) : new Redlock(clients, { acquireTimeoutMs: 120_000 });
const hold = () => new Promise((resolve) => setTimeout(resolve, 1));
let done = 0;
await Promise.all(clients.map((c) => c.ping()));
process.stdout.write('ready\n');
await new Promise((resolve) => process.stdin.once('data', resolve));
process.stdin.pause();
await Promise.all(
  Array.from({ length: Number(waitersArg) }, async () => {
    for (let round = 0; round < Number(roundsArg); round++) {
      const lock = await locker.acquire(key, 5_000);
      await hold();
      await lock.release();
      done++;
    }
  }),
);
process.stdout.write(`done ${done}\n`);
for (const client of clients) client.disconnect();
