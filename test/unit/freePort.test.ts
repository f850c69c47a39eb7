import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { claimableRange, claimPath, claimPort, freePort, ownerStamp, releasePort } from '../support/freePort.js';

const taken: number[] = [];
afterEach(() => {
  for (const port of taken.splice(0)) releasePort(port);
});

/** A port in the claimable range that nobody claims now (a test claims it by hand). */
async function unclaimedPort(): Promise<number> {
  const port = await freePort();
  releasePort(port);
  return port;
}

function stampPort(port: number, stamp: string): void {
  mkdirSync(dirname(claimPath(port)), { recursive: true });
  writeFileSync(claimPath(port), stamp);
}

function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'console.log(process.pid)'], { encoding: 'utf8' });
  return Number(child.stdout.trim());
}

describe('freePort', () => {
  it('hands out ports below the ephemeral range, claimed by this process until released', async () => {
    const [ephemeralLow] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number) as [number];
    const ports = await Promise.all(Array.from({ length: 20 }, () => freePort()));
    taken.push(...ports);
    expect(new Set(ports).size).toBe(ports.length);
    for (const port of ports) {
      expect(port).toBeLessThan(ephemeralLow);
      expect(readFileSync(claimPath(port), 'utf8')).toBe(ownerStamp());
    }
    const [first] = ports as [number];
    releasePort(first);
    expect(existsSync(claimPath(first))).toBe(false);
  });

  it('never takes a port a live process claims, and takes over the claim of a dead one', async () => {
    const liveClaim = await unclaimedPort();
    stampPort(liveClaim, ownerStamp(process.ppid));
    try {
      expect(claimPort(liveClaim)).toBe(false);
      expect(readFileSync(claimPath(liveClaim), 'utf8')).toBe(ownerStamp(process.ppid));
    } finally {
      rmSync(claimPath(liveClaim), { force: true });
    }

    const deadClaim = await unclaimedPort();
    stampPort(deadClaim, `${deadPid()} 1`);
    expect(claimPort(deadClaim)).toBe(true);
    taken.push(deadClaim);
    expect(readFileSync(claimPath(deadClaim), 'utf8')).toBe(ownerStamp());
    expect(claimPort(deadClaim), 'a port this process holds is not handed out twice').toBe(false);
  });

  it("treats a reused pid as a dead owner: its start time is not the claim's", async () => {
    const port = await unclaimedPort();
    stampPort(port, `${process.ppid} 1`);
    expect(claimPort(port)).toBe(true);
    taken.push(port);
  });

  it("releases a process's claims when it exits", () => {
    const out = execFileSync(process.execPath, ['--import', 'tsx', join(import.meta.dirname, '../support/fixtures/claimPorts.ts'), '3'], { encoding: 'utf8' });
    const ports = JSON.parse(out) as number[];
    expect(ports).toHaveLength(3);
    for (const port of ports) expect(existsSync(claimPath(port))).toBe(false);
  });

  it('claims above the ephemeral range when it starts too low to leave room below', () => {
    const dir = mkdtempSync(join(tmpdir(), 'quorumlock-range-'));
    try {
      const file = join(dir, 'range');
      writeFileSync(file, '32768\t60999\n');
      expect(claimableRange(file)).toEqual([20_000, 32_767]);
      writeFileSync(file, '10000\t50000\n');
      expect(claimableRange(file)).toEqual([50_001, 65_535]);
      writeFileSync(file, '1024\t65000\n');
      expect(() => claimableRange(file)).toThrow(/no room/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
