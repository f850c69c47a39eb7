import { expect, it } from 'vitest';
import { PROCESS_TAG, randomValue } from '../../src/shared/randomValue.js';

it('hands out distinct 128-bit hex values across pool refills, each behind the process tag', () => {
  const values = Array.from({ length: 2_000 }, randomValue);
  expect(PROCESS_TAG).toMatch(/^[0-9a-f]{8}$/);
  for (const value of values) expect(value).toMatch(new RegExp(`^${PROCESS_TAG}\\.[0-9a-f]{32}$`));
  expect(new Set(values).size).toBe(values.length);
});
