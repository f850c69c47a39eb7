/**
 * Imported (`node --import`) before a docs example: the example's imports of
 * quorumlock reach src/, and its connections to Redis on localhost:6379..6383,
 * written as a user would write them, reach the redis-server processes the
 * test started (QUORUMLOCK_EXAMPLE_PORTS, e.g. `6379=41001,6380=41002`).
 */
import { register } from 'node:module';
import net from 'node:net';
import { mapPort, parsePortMap } from './portMap.js';

register('./sourceHooks.mjs', import.meta.url);

const ports = parsePortMap(process.env['QUORUMLOCK_EXAMPLE_PORTS'] ?? '');
const connect = net.Socket.prototype.connect as (...args: unknown[]) => net.Socket;

// Every client's TCP connect ends in Socket#connect, with net's normalized
// argument array, an options object, or (port, host).
net.Socket.prototype.connect = function (this: net.Socket, ...args: unknown[]): net.Socket {
  const first = args[0];
  const options = Array.isArray(first) ? (first[0] as unknown) : first;
  if (typeof options === 'object' && options !== null && 'port' in options) {
    const target = options as { port?: number | string; host?: string };
    const mapped = mapPort(ports, target.host, target.port);
    if (mapped !== undefined) Object.assign(target, mapped);
  } else if (typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first))) {
    const mapped = mapPort(ports, typeof args[1] === 'string' ? args[1] : undefined, first);
    if (mapped !== undefined) {
      args[0] = mapped.port;
      if (typeof args[1] === 'string') args[1] = mapped.host;
    }
  }
  return connect.apply(this, args);
} as typeof net.Socket.prototype.connect;
