import { describe, expect, it } from 'vitest';
import { deferClaim } from '../../src/shared/claim.js';
import type { Grant } from '../../src/shared/grant.js';

const grant: Grant = { validUntil: 1_000, ttlMs: 5_000, outcomes: [] };

describe('deferClaim', () => {
  it('sends in the next tick, not while the acquire is still on its way', async () => {
    let sends = 0;
    const claim = deferClaim(() => {
      sends++;
      return Promise.resolve(grant);
    });
    await Promise.resolve();
    expect(sends).toBe(0);
    await new Promise((resolve) => process.nextTick(resolve));
    expect(sends).toBe(1);
    expect(await claim.result).toBe(grant);
  });

  it('send() sends at once, and only once', async () => {
    let sends = 0;
    const claim = deferClaim(() => {
      sends++;
      return Promise.resolve(grant);
    });
    claim.send();
    expect(sends).toBe(1);
    claim.send();
    await new Promise((resolve) => process.nextTick(resolve));
    expect(sends).toBe(1);
    expect(await claim.result).toBe(grant);
  });

  it('a claim that fails resolves to undefined: the lock keeps the reservation', async () => {
    const claim = deferClaim(() => Promise.reject(new Error('lost')));
    expect(await claim.result).toBeUndefined();
  });
});
