/**
 * What a waiter appends to the value of a key it found held (acquire.lua with
 * 'mark'): the holder's release then announces the deletion (release.lua), and
 * releases nobody waits for stay one command short, like a plain
 * compare-and-delete. Lock values are hex, so a value never ends with it.
 */
export const WAITER_MARK = '!';

/** A stored value without a waiter's mark: the holder's own value. */
export function holderValue(stored: string): string {
  return isMarked(stored) ? stored.slice(0, -WAITER_MARK.length) : stored;
}

/** Whether a waiter marked this stored value. */
export function isMarked(stored: string): boolean {
  return stored.endsWith(WAITER_MARK);
}
