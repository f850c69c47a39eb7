/**
 * What the Redis servers themselves executed, from INFO commandstats, summed
 * over nodes. Commands run inside Lua scripts count too, since the server
 * does that work; our own INFO calls do not.
 */
import type { Redis } from 'ioredis';

/** Calls and CPU time (µs) per command name. */
export type CommandStats = Map<string, { calls: number; usec: number }>;

const LINE = /^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm;
const OURS = new Set(['info']);

export async function snapshot(admins: readonly Redis[]): Promise<CommandStats> {
  const texts = await Promise.all(admins.map((admin) => admin.info('commandstats')));
  const total: CommandStats = new Map();
  for (const text of texts) {
    for (const [, name = '', calls = '0', usec = '0'] of text.matchAll(LINE)) {
      const entry = total.get(name) ?? { calls: 0, usec: 0 };
      entry.calls += Number(calls);
      entry.usec += Number(usec);
      total.set(name, entry);
    }
  }
  return total;
}

/** after - before, without our own INFO calls and without commands that did not run. */
export function difference(before: CommandStats, after: CommandStats): CommandStats {
  const delta: CommandStats = new Map();
  for (const [name, entry] of after) {
    if (OURS.has(name)) continue;
    const previous = before.get(name) ?? { calls: 0, usec: 0 };
    const calls = entry.calls - previous.calls;
    if (calls > 0) delta.set(name, { calls, usec: entry.usec - previous.usec });
  }
  return delta;
}

export function totalCalls(stats: CommandStats): number {
  let calls = 0;
  for (const entry of stats.values()) calls += entry.calls;
  return calls;
}

const CPU = /^used_cpu_(?:user|sys):([\d.]+)/gm;

/**
 * CPU time the servers' processes used so far, in µs, summed over nodes
 * (INFO cpu): running commands and their socket reads and writes. Not the
 * commandstats usec: a script's there includes the commands it ran, which
 * are counted again under their own names.
 */
export async function serverCpuUs(admins: readonly Redis[]): Promise<number> {
  const texts = await Promise.all(admins.map((admin) => admin.info('cpu')));
  let seconds = 0;
  for (const text of texts) for (const [, value = '0'] of text.matchAll(CPU)) seconds += Number(value);
  return seconds * 1e6;
}

/** Redis version of the first node, for the report. */
export async function redisVersion(admin: Redis): Promise<string> {
  const text = await admin.info('server');
  return /redis_version:([^\r\n]+)/.exec(text)?.[1] ?? 'unknown';
}
