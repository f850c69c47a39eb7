import { subscribe, unsubscribe } from 'node:diagnostics_channel';

/** Records every message published on the diagnostics channel `name` until `stop()`. */
export function recordChannel<T>(name: string): { events: T[]; stop: () => void } {
  const events: T[] = [];
  const listener = (message: unknown) => events.push(message as T);
  subscribe(name, listener);
  return { events, stop: () => unsubscribe(name, listener) };
}
