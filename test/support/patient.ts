/**
 * Locker options for tests that are not about timeouts: nodes get a second to
 * answer. On a loaded 2-core machine the event loop can stall past the 50 ms
 * default, and a node timing out there would fail a test for the wrong reason.
 * Tests of timeouts set `nodeTimeoutMs` themselves (it overrides this).
 */
export const patient = Object.freeze({ nodeTimeoutMs: 1_000 });
