/**
 * What the docs' examples take from the reader's own program, one entry per
 * name: its declaration for the type check, and a stub that stands in for it
 * when a block that uses it runs. A block gets exactly the names it uses
 * without declaring or importing them itself; a name in neither fails the
 * block, so an example cannot lean on an undeclared global unnoticed.
 * Library names do not belong here: an example imports those, as its reader
 * must. Each entry is one line of code (the preamble keeps the block's line
 * numbers).
 */
export interface UserName {
  readonly declaration: string;
  readonly stub: string;
}

export const USER_NAMES: Readonly<Record<string, UserName>> = {
  chargeCustomer: {
    declaration: 'declare function chargeCustomer(options: { signal: AbortSignal }): Promise<void>;',
    stub: 'async function chargeCustomer(options: { signal: AbortSignal }): Promise<void> { options.signal.throwIfAborted(); }',
  },
  markPaid: { declaration: 'declare function markPaid(): Promise<void>;', stub: 'async function markPaid(): Promise<void> {}' },
  moveStock: { declaration: 'declare function moveStock(): Promise<void>;', stub: 'async function moveStock(): Promise<void> {}' },
  clients: {
    declaration: "declare const clients: import('ioredis').Redis[];",
    stub: "const clients: import('ioredis').Redis[] = [];",
  },
  // node-postgres's Pool#query, reduced to what the examples use.
  db: {
    declaration: 'declare const db: { query(text: string, values: unknown[]): Promise<{ rowCount: number | null }> };',
    stub: 'const db = { async query(_text: string, _values: unknown[]): Promise<{ rowCount: number | null }> { return { rowCount: 1 }; } };',
  },
  id: { declaration: 'declare const id: string;', stub: "const id = 'order-42';" },
  // prom-client's Histogram#observe.
  histogram: {
    declaration: 'declare const histogram: { observe(labels: Record<string, string>, value: number): void };',
    stub: 'const histogram = { observe(_labels: Record<string, string>, _value: number): void {} };',
  },
};
