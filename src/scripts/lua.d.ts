// Lua sources are inlined as strings at build time (tsup's text loader, and
// a matching transform in vitest.config.ts), so the scripts stay in .lua files.
declare module '*.lua' {
  const source: string;
  export default source;
}
