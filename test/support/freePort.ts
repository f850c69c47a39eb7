/**
 * Loopback ports that no other test file can take, whatever runs beside it.
 *
 * A port from the kernel (bind to port 0) is an ephemeral one: once our
 * server dies or restarts, any outgoing connection of any process may get it
 * as its local port, and another test file's "free" port may be the one our
 * server is about to take. So ports come from below the kernel's ephemeral
 * range (/proc/sys/net/ipv4/ip_local_port_range), which it never hands out,
 * and each is claimed by an O_EXCL lock file in the OS temp dir that names
 * its owner (pid and start time): the claim holds across vitest runs and
 * worktrees of this repo. A claim lasts until releasePort() or the owner's
 * exit; a dead owner's claim is taken over.
 */
import { linkSync, mkdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pidExists } from './processRegistry.js';

const CLAIMS_DIR = join(tmpdir(), 'quorumlock-ports');
/** Below the usual ephemeral range's start (32768), above well-known services (6379, 7001-7005, 8080...). */
const PREFERRED_LOW = 20_000;
const ATTEMPTS = 200;

const claimed = new Set<number>();
let exitHooked = false;

/**
 * Claims a port nobody listens on and no other claimant holds, for this
 * process, until releasePort() or exit. The name is kept from when it asked
 * the kernel for a port: every caller wants a free port and now gets one that
 * stays free.
 */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  const [low, high] = claimableRange();
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const port = low + Math.floor(Math.random() * (high - low + 1));
    if (!claimPort(port)) continue;
    // A process outside this scheme may listen there.
    if (await canListen(port, host)) return port;
    releasePort(port);
  }
  throw new Error(`freePort: no claimable port in ${low}-${high} after ${ATTEMPTS} attempts (claims in ${CLAIMS_DIR})`);
}

/** Gives a claimed port back (a server stopped for good). */
export function releasePort(port: number): void {
  if (!claimed.delete(port)) return;
  try {
    unlinkSync(claimPath(port));
  } catch {
    // already gone
  }
}

/** The ports a claim may take: below the kernel's ephemeral range, or above it when it starts too low. */
export function claimableRange(rangeFile = '/proc/sys/net/ipv4/ip_local_port_range'): [number, number] {
  let ephemeral: [number, number] = [32_768, 60_999];
  try {
    const [first, last] = readFileSync(rangeFile, 'utf8').trim().split(/\s+/).map(Number);
    if (first !== undefined && last !== undefined && Number.isInteger(first) && Number.isInteger(last)) ephemeral = [first, last];
  } catch {
    // not Linux: the usual default
  }
  const [first, last] = ephemeral;
  if (first - 1 - PREFERRED_LOW >= 2_000) return [PREFERRED_LOW, first - 1];
  if (65_535 - (last + 1) >= 2_000) return [last + 1, 65_535];
  throw new Error(`freePort: the ephemeral range ${first}-${last} leaves no room for claimed ports`);
}

export function claimPath(port: number): string {
  return join(CLAIMS_DIR, `${port}.claim`);
}

/** Who owns this process's claims: a pid alone could be reused by another process after ours died. */
export function ownerStamp(pid = process.pid): string {
  return `${pid} ${startTime(pid) ?? '?'}`;
}

function startTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 22 (starttime), counted after the parenthesised command name, which may hold spaces.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

function ownerAlive(stamp: string): boolean {
  const [pidText, started] = stamp.split(' ');
  const pid = Number(pidText);
  if (!Number.isInteger(pid) || pid <= 0 || !pidExists(pid)) return false;
  const now = startTime(pid);
  return started === '?' || now === undefined || now === started;
}

/** Claims this port for this process unless a live process (this one included) holds it; true when it is now ours. */
export function claimPort(port: number): boolean {
  if (claimed.has(port)) return false;
  mkdirSync(CLAIMS_DIR, { recursive: true });
  const path = claimPath(port);
  if (create(path)) return remember(port);
  let stamp: string;
  try {
    stamp = readFileSync(path, 'utf8');
  } catch {
    return false; // released meanwhile: another attempt picks another port
  }
  if (ownerAlive(stamp)) return false;
  return takeOver(path, stamp) && remember(port);
}

/**
 * Moves a dead owner's claim aside and makes ours. The move is atomic, so of
 * two processes taking over at once one moves the dead claim; if the other
 * then moved the winner's fresh claim instead, it sees a live stamp in what
 * it moved and links it back.
 */
function takeOver(path: string, deadStamp: string): boolean {
  const aside = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}`;
  try {
    renameSync(path, aside);
  } catch {
    return false;
  }
  let moved = '';
  try {
    moved = readFileSync(aside, 'utf8');
  } catch {
    // vanished: nothing to give back
  }
  if (moved !== deadStamp) {
    try {
      linkSync(aside, path);
    } catch {
      // a third claimant took the path meanwhile; the moved claim's owner loses it
    }
    unlinkSync(aside);
    return false;
  }
  unlinkSync(aside);
  return create(path);
}

/** Written aside and linked into place: link fails if the path exists, and a claim is never seen half-written. */
function create(path: string): boolean {
  const draft = `${path}.${process.pid}.draft`;
  writeFileSync(draft, ownerStamp());
  try {
    linkSync(draft, path);
    return true;
  } catch {
    return false;
  } finally {
    unlinkSync(draft);
  }
}

function remember(port: number): true {
  claimed.add(port);
  if (!exitHooked) {
    exitHooked = true;
    process.on('exit', () => {
      for (const port of [...claimed]) releasePort(port);
    });
  }
  return true;
}

function canListen(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(true)));
  });
}
