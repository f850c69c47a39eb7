import { companionKey } from './lineKeys.js';

/** The key of a resource's fencing-token counter, in the resource's hash slot. */
export function fencingKeyFor(resource: string): string {
  return companionKey(resource, 'fencing');
}
