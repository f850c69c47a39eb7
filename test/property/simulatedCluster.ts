/**
 * The coordinator as the model-based tests drive it: a QuorumCoordinator over
 * LockNodes backed by SimulatedNodes, on fake-timer time, with a recorder that
 * follows what every lock's holder believes (valid until when) and checks,
 * whenever something happens, what the Redlock algorithm promises:
 *
 * - while a holder believes its lock valid (its Lock handle's validUntil), a
 *   quorum of nodes holds its value at least until then (a node down after a
 *   delayed restart counts: it takes nobody's lock meanwhile); and every grant
 *   or extension is backed by such a quorum the moment it is made;
 * - no two holders of one resource believe themselves valid at the same time;
 * - extend and release touch only keys that hold their own value;
 * - an acquire that failed, and a released lock, sent a release to every node
 *   its value may have landed on, after it landed.
 */
import type { Clock } from '../../src/clock/Clock.js';
import { isQuorumLockError, LockLostError } from '../../src/shared/errors.js';
import type { Grant, ReleaseResult } from '../../src/shared/grant.js';
import type { Lock } from '../../src/lock/Lock.js';
import { type LockerOptions, resolveLockerOptions } from '../../src/lock/options.js';
import { LockNode } from '../../src/node/LockNode.js';
import { QuorumCoordinator } from '../../src/redlock/QuorumCoordinator.js';
import { holds, type RequestPlan, SimulatedNode, withScriptsLoaded } from '../support/SimulatedNode.js';

/** The fake-timer time as a Clock: LockNode's timeouts, backoff sleeps and node delays all run on it. */
export const fakeTimerClock: Clock = { now: () => Date.now() };

/**
 * A node's own clock, running `rate` times as fast as the fake-timer time from
 * `origin` on: a node with rate 1.5 expires keys after two thirds of their TTL.
 */
export class NodeClock implements Clock {
  constructor(
    readonly rate: number,
    private readonly origin: number,
  ) {}

  now(): number {
    return this.origin + (fakeTimerClock.now() - this.origin) * this.rate;
  }

  /** The fake-timer instant at which this clock shows `nodeInstant`. */
  toFakeTime(nodeInstant: number): number {
    return this.origin + (nodeInstant - this.origin) / this.rate;
  }
}

interface Belief {
  readonly value: string;
  readonly keys: readonly string[];
  /** The validity the acquire granted: what the holder believes until its Lock handle is known. */
  readonly granted: number;
  /** The holder's handle: from then on its validUntil is the belief (extends change it). */
  lock?: Lock;
  /** Released, or lost (a quorum said the value is gone). */
  ended: boolean;
  /** release() was called: it must reach every node. */
  released: boolean;
  /** Extends on their way: the nodes may already hold the new TTL, the holder does not know yet. */
  extending: number;
  /** Extends that ended since the last quiet moment: the handle may not have taken their result in yet. */
  unsettled: number;
}

function believedUntil(belief: Belief): number {
  return belief.lock?.validUntil ?? belief.granted;
}

/** What the runs exercised, so a property cannot pass by exercising nothing. */
export const tally = { grants: 0, handedOff: 0, failedAttempts: 0, extended: 0, failedExtends: 0, released: 0 };

/** Follows every lock's life through the coordinator's own node operations. */
export class History {
  readonly violations: string[] = [];
  readonly #beliefs = new Map<string, Belief>();
  /** Values whose every acquire attempt failed (so far). */
  readonly #attempted = new Map<string, readonly string[]>();

  constructor(
    private readonly nodes: readonly SimulatedNode[],
    private readonly quorum: number,
    private readonly clock: Clock,
  ) {}

  attempted(value: string, keys: readonly string[]): void {
    this.#attempted.set(value, keys);
  }

  attemptFailed(): void {
    tally.failedAttempts++;
  }

  granted(value: string, keys: readonly string[], grant: Grant): void {
    tally.grants++;
    this.#beliefs.set(value, { value, keys, granted: grant.validUntil, ended: false, released: false, extending: 0, unsettled: 0 });
    this.check(`granted ${short(value)}`);
  }

  /** The handle the holder got: what it believes is read from it from now on. */
  track(lock: Lock): void {
    const belief = this.#beliefs.get(lock.value);
    if (belief) belief.lock = lock;
  }

  extending(value: string): void {
    const belief = this.#beliefs.get(value);
    if (belief) belief.extending++;
  }

  /**
   * Whether the holder's handle has let go of its claim (Lock.pendingClaim): an extend or release
   * went out after it, and that write's answer is the one the handle counts.
   */
  claimOvertaken(value: string): boolean {
    const lock = this.#beliefs.get(value)?.lock;
    return lock !== undefined && lock.pendingClaim === undefined;
  }

  extended(value: string, keys: readonly string[], outcome: { grant?: Grant; error?: unknown; overtaken?: boolean }): void {
    const belief = this.#beliefs.get(value);
    if (!belief) return;
    belief.extending--;
    belief.unsettled++;
    if (outcome.error instanceof LockLostError) belief.ended = true;
    if (outcome.grant) {
      tally.extended++;
      // (Unless a release overtook it, or a later extend overtook a claim: then the extension
      // means nothing, and the handle says so.)
      if (!belief.ended && !outcome.overtaken) this.checkQuorum(`extend of ${short(value)} granted`, value, keys, outcome.grant.validUntil);
    } else {
      tally.failedExtends++;
    }
    this.check(`extend of ${short(value)} ${outcome.grant ? 'granted' : `failed (${describeError(outcome.error)})`}`);
  }

  released(value: string): void {
    const belief = this.#beliefs.get(value);
    if (belief && !belief.released) tally.released++;
    if (belief) belief.ended = belief.released = true;
  }

  /**
   * The invariants that must hold at every instant. `quiet`: every call has run as far as
   * it can without time passing, so each handle has taken in its extends' results.
   */
  check(when: string, quiet = false): void {
    const now = this.clock.now();
    const valid = [...this.#beliefs.values()].filter((b) => !b.ended && believedUntil(b) > now);
    for (const belief of valid) {
      if (quiet) belief.unsettled = 0;
      if (belief.extending > 0 || belief.unsettled > 0) continue;
      this.checkQuorum(when, belief.value, belief.keys, believedUntil(belief));
    }
    for (const [i, a] of valid.entries()) {
      for (const b of valid.slice(i + 1)) {
        if (a.keys.some((key) => b.keys.includes(key))) {
          this.fail(
            `${when}: ${short(a.value)} (until ${believedUntil(a)}) and ${short(b.value)} (until ${believedUntil(b)}) ` +
              `both believe they hold [${a.keys.filter((k) => b.keys.includes(k))}] at ${now}`,
          );
        }
      }
    }
  }

  /** A quorum of nodes holds `value` on every key at least until `validUntil`. */
  private checkQuorum(when: string, value: string, keys: readonly string[], validUntil: number): void {
    const holding = this.nodes.filter((node) => holdsUntil(node, value, keys, validUntil));
    if (holding.length < this.quorum) {
      this.fail(
        `${when}: ${short(value)} on [${keys}] is believed valid until ${validUntil} (now ${this.clock.now()}) ` +
          `but only ${holding.length} node(s) hold it that long (quorum ${this.quorum}): ${this.describeNodes(keys)}`,
      );
    }
  }

  /** Once every request has been applied: what the nodes' logs must show. */
  checkSettled(): void {
    for (const node of this.nodes) {
      for (const request of node.requests) {
        for (const change of request.changed ?? []) {
          // A resource's companions ({r1}:ticket, …) are the scripts' own bookkeeping, not a holder's key.
          if (change.key.startsWith('{')) continue;
          if (request.op !== 'acquire' && !request.values.some((value) => holds(change.before, value))) {
            this.fail(`${node.name}: ${request.op} #${request.seq} of ${short(request.value)} changed ${change.key}, held by ${short(change.before)}`);
          }
        }
      }
    }
    // Values nobody holds any more: every failed acquire, and every released lock (a lost one
    // is left to expire: a quorum already said it is gone).
    const done = new Set([...this.#attempted.keys()].filter((v) => !this.#beliefs.has(v)));
    for (const belief of this.#beliefs.values()) if (belief.released) done.add(belief.value);
    for (const value of done) {
      for (const node of this.nodes) {
        const mine = node.requests.filter((r) => r.values.includes(value));
        const landed = mine.filter((r) => r.op === 'acquire' && (r.changed ?? []).some((change) => holds(change.after, value))).at(-1);
        if (landed === undefined) continue;
        const releasedAfter = mine.some((r) => r.op === 'release' && r.seq > landed.seq);
        if (!releasedAfter) {
          this.fail(`${node.name}: ${short(value)} landed (acquire #${landed.seq}) and no release was sent after it`);
        }
      }
    }
  }

  fail(message: string): void {
    if (this.violations.length < 5) this.violations.push(message);
  }

  private describeNodes(keys: readonly string[]): string {
    return this.nodes
      .map((node) => {
        const rate = (node.clock as NodeClock).rate;
        return `${node.name}${rate === 1 ? '' : `(clock x${rate.toFixed(3)})`}${node.isDown ? '(down)' : ''}{${keys.map((k) => `${k}=${short(node.get(k))}/${node.pttl(k)}`)}}`;
      })
      .join(' ');
  }
}

/**
 * The node holds every key with the value until at least validUntil, or refuses everyone
 * until then; both counted on the coordinator's time, whatever the node's clock says.
 */
function holdsUntil(node: SimulatedNode, value: string, keys: readonly string[], validUntil: number): boolean {
  const clock = node.clock as NodeClock;
  if (clock.toFakeTime(node.availableAt) >= validUntil) return true;
  return keys.every((key) => holds(node.get(key), value) && clock.toFakeTime(clock.now() + node.pttl(key)) >= validUntil);
}

function short(value: string | undefined): string {
  return value === undefined ? '-' : value.slice(0, 6);
}

function describeError(error: unknown): string {
  return isQuorumLockError(error) ? error.code : String(error);
}

/**
 * QuorumCoordinator with a public constructor, reporting each node operation
 * to the History. It changes nothing in what the coordinator does.
 */
export class SimulatedLocker extends QuorumCoordinator {
  constructor(
    nodes: readonly LockNode[],
    options: LockerOptions,
    private readonly history: History,
  ) {
    super(nodes, resolveLockerOptions(options));
  }

  // Arguments are passed on whole, so the recorder keeps up with the coordinator's signatures.
  protected override async acquireOnNodes(...args: Parameters<QuorumCoordinator['acquireOnNodes']>): Promise<Grant> {
    const [keys, value] = args;
    this.history.attempted(value, keys);
    let grant: Grant;
    try {
      grant = await super.acquireOnNodes(...args);
    } catch (error) {
      this.history.attemptFailed();
      throw error;
    }
    this.history.granted(value, keys, grant);
    return grant;
  }

  protected override async extendOnNodes(...args: Parameters<QuorumCoordinator['extendOnNodes']>): Promise<Grant> {
    const [keys, value] = args;
    this.history.extending(value);
    try {
      const grant = await super.extendOnNodes(...args);
      this.history.extended(value, keys, { grant });
      return grant;
    } catch (error) {
      this.history.extended(value, keys, { error });
      throw error;
    }
  }

  protected override async handedOffGrant(...args: Parameters<QuorumCoordinator['handedOffGrant']>): Promise<Grant> {
    const [keys, value] = args;
    this.history.attempted(value, keys);
    const grant = await super.handedOffGrant(...args);
    tally.handedOff++;
    this.history.granted(value, keys, grant);
    return grant;
  }

  /** A handed-off lock's claim of its full TTL: an extend, as far as what the holder believes goes. */
  protected override async claimOnNodes(...args: Parameters<QuorumCoordinator['claimOnNodes']>): Promise<Grant> {
    const [keys, value] = args;
    this.history.extending(value);
    try {
      const grant = await super.claimOnNodes(...args);
      // A shorter extend sent after the claim leaves the keys to its own TTL; the handle follows it, not the claim.
      this.history.extended(value, keys, { grant, overtaken: this.history.claimOvertaken(value) });
      return grant;
    } catch (error) {
      // Not `{ error }`: a lost claim does not end the lock (LockLostError would), which keeps the
      // reservation's validity, and the History goes on checking it.
      this.history.extended(value, keys, {});
      throw error;
    }
  }

  protected override releaseOnNodes(...args: Parameters<QuorumCoordinator['releaseOnNodes']>): Promise<ReleaseResult> {
    this.history.released(args[1]);
    return super.releaseOnNodes(...args);
  }
}

export interface ClusterSetup {
  /** Each node's requests take these plans in turn (cycling); an empty list answers at once. */
  readonly plans: readonly (readonly RequestPlan[])[];
  /** Every reply takes at least this long (a real round trip is never instant). */
  readonly minReplyMs?: number;
  /** How fast each node's clock runs against the coordinator's (default 1). */
  readonly clockRates?: readonly number[];
  readonly options: LockerOptions;
  /** Node names must differ between runs: waiters line up per node names and keys, process-wide. */
  readonly namePrefix: string;
}

export interface SimulatedCluster {
  readonly nodes: readonly SimulatedNode[];
  readonly locker: SimulatedLocker;
  readonly history: History;
}

/**
 * More requests than any run needs: a node that gets them is in a retry loop that never
 * waits, which on instant simulated nodes would spin without time passing (until memory
 * runs out). From then on the node stops answering, so time moves and the run ends, with
 * the loop reported as a violation.
 */
const RUNAWAY_REQUESTS = 10_000;

export function simulatedCluster(setup: ClusterSetup): SimulatedCluster {
  let history: History | undefined;
  const nodes = setup.plans.map((plans, i) => {
    const planner = (request: { seq: number; op: string }): RequestPlan => {
      if (request.seq >= RUNAWAY_REQUESTS) {
        if (request.seq === RUNAWAY_REQUESTS) {
          history?.fail(`runaway: node ${i} got ${RUNAWAY_REQUESTS} requests (the last a${request.op === 'acquire' ? 'n' : ''} ${request.op}): a retry loop that never waits`);
        }
        return { fate: 'lose-reply', applyAfterMs: 60_000 };
      }
      const plan = plans[(request.seq - 1) % Math.max(1, plans.length)] ?? {};
      return { ...plan, replyAfterMs: Math.max(setup.minReplyMs ?? 0, plan.replyAfterMs ?? 0) };
    };
    const clock = new NodeClock(setup.clockRates?.[i] ?? 1, fakeTimerClock.now());
    return withScriptsLoaded(new SimulatedNode(`${setup.namePrefix}n${i}`, clock, planner));
  });
  const lockNodes = nodes.map((node) => new LockNode(node, fakeTimerClock));
  history = new History(nodes, Math.floor(nodes.length / 2) + 1, fakeTimerClock);
  const locker = new SimulatedLocker(lockNodes, { ...setup.options, clock: fakeTimerClock }, history);
  return { nodes, locker, history };
}
