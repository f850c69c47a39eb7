/**
 * The coordinator as the model-based tests drive it: a QuorumCoordinator over
 * LockNodes backed by SimulatedNodes, on fake-timer time, with a recorder that
 * follows what every lock's holder believes (valid until when) and checks,
 * whenever something happens, what the Redlock algorithm promises:
 *
 * - while a holder believes its lock valid, a quorum of nodes holds its value
 *   at least until then (a node down after a delayed restart counts: it takes
 *   nobody's lock meanwhile);
 * - no two holders of one resource believe themselves valid at the same time;
 * - extend and release touch only keys that hold their own value;
 * - an acquire that failed, and a released lock, sent a release to every node
 *   its value may have landed on, after it landed.
 */
import type { Clock } from '../../src/clock/Clock.js';
import { isQuorumLockError, LockLostError } from '../../src/lock/errors.js';
import type { Grant, ReleaseResult } from '../../src/lock/grant.js';
import { type LockerOptions, resolveLockerOptions } from '../../src/lock/options.js';
import { LockNode } from '../../src/node/LockNode.js';
import { QuorumCoordinator } from '../../src/redlock/QuorumCoordinator.js';
import { type RequestPlan, SimulatedNode } from '../support/SimulatedNode.js';

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
  validUntil: number;
  /** Released, or lost (a quorum said the value is gone). */
  ended: boolean;
  /** release() was called: it must reach every node. */
  released: boolean;
  /** An extend is on its way: the nodes may already hold its TTL, the holder does not know yet. */
  extending: number;
}

/** What the runs exercised, so a property cannot pass by exercising nothing. */
export const tally = { grants: 0, failedAttempts: 0, extended: 0, failedExtends: 0, released: 0 };

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
    this.#beliefs.set(value, { value, keys, validUntil: grant.validUntil, ended: false, released: false, extending: 0 });
    this.check(`granted ${short(value)}`);
  }

  extending(value: string): void {
    const belief = this.#beliefs.get(value);
    if (belief) belief.extending++;
  }

  extended(value: string, outcome: { grant?: Grant; error?: unknown }): void {
    const belief = this.#beliefs.get(value);
    if (!belief) return;
    belief.extending--;
    // As the Lock handle does: a new validity on success, ended on LockLostError, unchanged otherwise.
    if (outcome.grant && !belief.ended) belief.validUntil = outcome.grant.validUntil;
    if (outcome.grant) tally.extended++;
    else tally.failedExtends++;
    if (outcome.error instanceof LockLostError) belief.ended = true;
    this.check(`extend of ${short(value)} ${outcome.grant ? 'granted' : `failed (${describeError(outcome.error)})`}`);
  }

  released(value: string): void {
    const belief = this.#beliefs.get(value);
    if (belief && !belief.released) tally.released++;
    if (belief) belief.ended = belief.released = true;
  }

  /** The invariants that must hold at every instant. */
  check(when: string): void {
    const now = this.clock.now();
    const valid = [...this.#beliefs.values()].filter((b) => !b.ended && b.validUntil > now);
    for (const belief of valid) {
      if (belief.extending > 0) continue;
      const holding = this.nodes.filter((node) => holdsUntil(node, belief));
      if (holding.length < this.quorum) {
        this.fail(
          `${when}: ${short(belief.value)} on [${belief.keys}] is believed valid until ${belief.validUntil} (now ${now}) ` +
            `but only ${holding.length} node(s) hold it that long (quorum ${this.quorum}): ${this.describeNodes(belief.keys)}`,
        );
      }
    }
    for (const [i, a] of valid.entries()) {
      for (const b of valid.slice(i + 1)) {
        if (a.keys.some((key) => b.keys.includes(key))) {
          this.fail(
            `${when}: ${short(a.value)} (until ${a.validUntil}) and ${short(b.value)} (until ${b.validUntil}) ` +
              `both believe they hold [${a.keys.filter((k) => b.keys.includes(k))}] at ${now}`,
          );
        }
      }
    }
  }

  /** Once every request has been applied: what the nodes' logs must show. */
  checkSettled(): void {
    for (const node of this.nodes) {
      for (const request of node.requests) {
        for (const change of request.changed ?? []) {
          if (request.op !== 'acquire' && change.before !== request.value) {
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
        const mine = node.requests.filter((r) => r.value === value);
        const landed = mine.filter((r) => r.op === 'acquire' && r.result === true).at(-1);
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
function holdsUntil(node: SimulatedNode, belief: Belief): boolean {
  const clock = node.clock as NodeClock;
  if (clock.toFakeTime(node.availableAt) >= belief.validUntil) return true;
  return belief.keys.every(
    (key) => node.get(key) === belief.value && clock.toFakeTime(clock.now() + node.pttl(key)) >= belief.validUntil,
  );
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
    const [, value] = args;
    this.history.extending(value);
    try {
      const grant = await super.extendOnNodes(...args);
      this.history.extended(value, { grant });
      return grant;
    } catch (error) {
      this.history.extended(value, { error });
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

export function simulatedCluster(setup: ClusterSetup): SimulatedCluster {
  const nodes = setup.plans.map((plans, i) => {
    const planner = (request: { seq: number }): RequestPlan => {
      const plan = plans[(request.seq - 1) % Math.max(1, plans.length)] ?? {};
      return { ...plan, replyAfterMs: Math.max(setup.minReplyMs ?? 0, plan.replyAfterMs ?? 0) };
    };
    const clock = new NodeClock(setup.clockRates?.[i] ?? 1, fakeTimerClock.now());
    return new SimulatedNode(`${setup.namePrefix}n${i}`, clock, planner);
  });
  const lockNodes = nodes.map((node) => new LockNode(node, fakeTimerClock));
  const history = new History(nodes, Math.floor(nodes.length / 2) + 1, fakeTimerClock);
  const locker = new SimulatedLocker(lockNodes, { ...setup.options, clock: fakeTimerClock }, history);
  return { nodes, locker, history };
}
