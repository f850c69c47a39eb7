/**
 * A command as the Redis protocol carries it (RESP: an array of bulk
 * strings), encoded once so that the same frame can go to several nodes
 * (ClientAdapter.sendEncoded, in node/). A batch of 100 renewals sent to
 * five nodes was framed five times by the client, argument by argument:
 * with 10,000 locks held, that framing and the writes of its strings were
 * 40% of what the process allocated. A string, not a Buffer: a frame of
 * 100 keys is past Node's pooled size, and a Buffer of its own per chunk
 * (an ArrayBuffer outside the heap) tripled the work of V8's helper threads.
 */
export function encodeCommand(parts: readonly (string | number)[]): string {
  const pieces = new Array<string>(parts.length + 1);
  pieces[0] = `*${parts.length}\r\n`;
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i];
    const text = typeof part === 'string' ? part : String(part);
    pieces[i + 1] = `$${Buffer.byteLength(text)}\r\n${text}\r\n`;
  }
  return pieces.join('');
}
