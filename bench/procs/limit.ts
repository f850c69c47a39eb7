/** Time limits on promises, leaving no timer behind. */

/** `promise`'s value, or undefined once `limitMs` passed first. */
export async function raceLimit<T>(promise: Promise<T>, limitMs: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([promise, new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), limitMs)))]);
  } finally {
    clearTimeout(timer);
  }
}

/** `promise`'s value; rejects with `message` once `limitMs` passed first. */
export async function withLimit<T>(promise: Promise<T>, limitMs: number, message: string): Promise<T> {
  const value = await raceLimit(
    promise.then((v) => ({ v })),
    limitMs,
  );
  if (value === undefined) throw new Error(message);
  return value.v;
}
