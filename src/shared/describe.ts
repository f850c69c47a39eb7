/** Names a bad value for a message: primitives as written in code, anything else by its kind, with its article. */
export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return value.length === 0 ? 'an empty array' : 'an array';
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
    case 'bigint':
      // Without the suffix, "expected a number, got 5" would make no sense.
      return `${value}n`;
    case 'number':
    case 'boolean':
    case 'undefined':
      return String(value);
    case 'function':
      return 'a function';
    case 'symbol':
      return 'a symbol';
    default: {
      const name: unknown = (value as { constructor?: { name?: unknown } }).constructor?.name;
      if (typeof name !== 'string' || name === '' || name === 'Object') return 'an object';
      // U is left out: the U names met here (Uint8Array, URL) are said with a "you".
      return `${/^[AEIOaeio]/.test(name) ? 'an' : 'a'} ${name}`;
    }
  }
}
