import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { jsonLine, ROOT, runCli } from './cliProcess.js';

// Usage errors are found before any connection, so no Redis is needed here;
// the URL below is never dialled.
const NODE = ['--redis', 'redis://127.0.0.1:1'];

describe('quorumlock usage errors exit 64 and name the bad argument', () => {
  it.each([
    ['no command', [], /Usage: quorumlock/],
    ['an unknown command', ['lock', 'x'], /unknown command 'lock'/],
    ['exec without RESOURCE', ['exec'], /missing required argument 'resource'/],
    ['exec without COMMAND', ['exec', ...NODE, 'job'], /missing required argument 'command'/],
    ['exec without --', ['exec', ...NODE, 'job', 'true'], /Invalid COMMAND: put -- between RESOURCE and the command/],
    ['exec with a RESOURCE after -- but no second --', ['exec', ...NODE, '--', 'job', 'true'], /Invalid COMMAND: put -- between RESOURCE and the command/],
    ['exec with nothing after the second --', ['exec', ...NODE, '--', '-job', '--'], /Invalid COMMAND: no command after the -- that follows RESOURCE/],
    ['an empty RESOURCE', ['exec', ...NODE, '', '--', 'true'], /Invalid RESOURCE: expected a non-empty string/],
    ['a --ttl that is not a duration', ['exec', ...NODE, '--ttl', 'soon', 'job', '--', 'true'], /option '--ttl <duration>' argument 'soon' is invalid\. expected a duration like 500ms/],
    ['a zero --ttl', ['exec', ...NODE, '--ttl', '0', 'job', '--', 'true'], /'--ttl <duration>' argument '0' is invalid\. expected at least 1 ms/],
    ['a fractional millisecond', ['exec', ...NODE, '--ttl', '1.5ms', 'job', '--', 'true'], /'--ttl <duration>' argument '1.5ms' is invalid\. expected a whole number/],
    ['a bad --wait', ['exec', ...NODE, '--wait', 'always', 'job', '--', 'true'], /'--wait <duration>' argument 'always' is invalid\..*or forever/],
    ['a bad --grace', ['exec', ...NODE, '--grace', '-1s', 'job', '--', 'true'], /'--grace <duration>' argument '-1s' is invalid/],
    ['a --sync-replicas that is not a count', ['exec', ...NODE, '--sync-replicas', '0', 'job', '--', 'true'], /'--sync-replicas <count>' argument '0' is invalid\. expected a whole number of replicas, 1 or more/],
    ['a bad --on-lost', ['exec', ...NODE, '--on-lost', 'ignore', 'job', '--', 'true'], /'--on-lost <action>' argument 'ignore' is invalid\. Allowed choices are term, kill/],
    ['a misspelt option', ['exec', ...NODE, '--tll', '5s', 'job', '--', 'true'], /unknown option '--tll'\n\(Did you mean --ttl\?\)/],
    ['no Redis node', ['exec', 'job', '--', 'true'], /Invalid --redis: no Redis node given: pass --redis URL .* or set QUORUMLOCK_REDIS_URLS/],
    ['a URL that is not Redis', ['exec', '--redis', 'http://h:1', 'job', '--', 'true'], /Invalid --redis: expected a redis:\/\/, rediss:\/\/ or redis\+sentinel:\/\/ URL/],
    ['a URL that does not parse', ['exec', '--redis', 'redis://:secret@', 'job', '--', 'true'], /Invalid --redis: expected a URL like redis:\/\/host:6379, got "redis:\/\/…@"/],
    [
      'the same host:port twice',
      ['exec', '--redis', 'redis://u:secret@127.0.0.1:1', '--redis', 'redis://127.0.0.1:1/2', 'job', '--', 'true'],
      /^quorumlock exec: Invalid --redis #2: redis:\/\/127\.0\.0\.1:1\/2 is the same Redis server as --redis #1 \(redis:\/\/u:…@127\.0\.0\.1:1\): both name 127\.0\.0\.1:1;/,
    ],
    ['a RESOURCE that starts with - and no --', ['exec', ...NODE, '-job', '--', 'true'], /unknown option '-job'\nA RESOURCE that starts with '-' goes after '--': quorumlock exec \[options\] -- -RESOURCE -- COMMAND/],
    ['status without RESOURCE', ['status', ...NODE], /missing required argument 'resource'/],
    ['release without --value', ['release', ...NODE, 'job'], /required option '--value <value>' not specified/],
    ['release with an empty --value', ['release', ...NODE, '--value', '', 'job'], /Invalid --value: expected a non-empty string/],
    ['a bad --timeout', ['status', ...NODE, '--timeout', '2 s', 'job'], /'--timeout <duration>' argument '2 s' is invalid/],
  ])('%s', async (_name, args, message) => {
    const result = await runCli(args);
    expect(result.code).toBe(64);
    expect(result.stderr).toMatch(message);
    expect(result.stderr).not.toContain('secret');
    expect(result.stdout).toBe('');
  });

  it('reads QUORUMLOCK_REDIS_URLS and names it when it is wrong', async () => {
    const result = await runCli(['exec', 'job', '--', 'true'], { env: { QUORUMLOCK_REDIS_URLS: 'redis://127.0.0.1:1,localhost:2' } });
    expect(result.code).toBe(64);
    expect(result.stderr).toMatch(/Invalid QUORUMLOCK_REDIS_URLS #2: expected a redis:\/\/, rediss:\/\/ or redis\+sentinel:\/\/ URL/);
  });

  it('prints usage errors as JSON with --json', async () => {
    const parseError = await runCli(['exec', ...NODE, '--json', '--ttl', 'x', 'job', '--', 'true']);
    const checkError = await runCli(['exec', '--json', '--redis', 'ftp://h', 'job', '--', 'true']);
    expect(parseError.code).toBe(64);
    expect(jsonLine(parseError.stderr)).toMatchObject({ command: 'exec', ok: false, outcome: 'usage', exitCode: 64 });
    expect(checkError.code).toBe(64);
    expect(jsonLine(checkError.stderr)).toMatchObject({ outcome: 'usage', exitCode: 64, argument: '--redis' });
  });

  it("leaves the command's own options alone after --", async () => {
    // --ttl after -- belongs to the command; if quorumlock parsed it, 'x' would be a usage error.
    const result = await runCli(['exec', '--redis', 'ftp://h', 'job', '--', 'true', '--ttl', 'x']);
    expect(result.stderr).toMatch(/Invalid --redis/);
  });
});

describe('quorumlock --help', () => {
  it.each([
    [[], /Usage: quorumlock \[options\] \[command\]/],
    [['exec'], /Usage: quorumlock exec \[options\] RESOURCE -- COMMAND \[ARGS\.\.\.\][\s\S]*QUORUMLOCK_FENCING_TOKEN[\s\S]*79 +exec: the lock was lost/],
    [['status'], /Usage: quorumlock status \[options\] <resource>[\s\S]*--json/],
    [['release'], /Usage: quorumlock release \[options\] <resource>[\s\S]*--value <value>/],
  ])('quorumlock %j --help exits 0 with the usage', async (command, usage) => {
    const result = await runCli([...command, '--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(usage);
    expect(result.stdout).toMatch(/Exit status:[\s\S]*64 +usage error/);
  });
});

describe('quorumlock --version', () => {
  it.each([['--version'], ['-V']])('%s prints the package version and exits 0', async (flag) => {
    const { version } = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    const result = await runCli([flag]);
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toBe(version);
  });
});
