import { expect, it } from 'vitest';
import { randomValue } from '../../src/lock/randomValue.js';

it('hands out distinct 128-bit hex values across pool refills', () => {
  const values = Array.from({ length: 2_000 }, randomValue);
  for (const value of values) expect(value).toMatch(/^[0-9a-f]{32}$/);
  expect(new Set(values).size).toBe(values.length);
});
