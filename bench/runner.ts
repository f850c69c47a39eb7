/**
 * Runs the plan: per topology and scenario, a warm-up of every contender,
 * then rounds in which the contenders take turns (the order rotates each
 * round, so none always runs first or right after the same neighbour), and
 * medians over the rounds. On a noisy machine only side-by-side numbers from
 * one run mean anything.
 */
import type { Redis } from 'ioredis';
import { openAdminClient, openClients, type ClientGroup } from './clients.js';
import { contenderKey, type BenchLocker, type Contender } from './contenders/index.js';
import { METRICS, type MetricId, type Sample } from './metrics.js';
import { contendersFor, type Plan } from './plan.js';
import { Progress } from './progress.js';
import { type ContenderResult, emptyResult, type ScenarioResult, type TopologyResult } from './results.js';
import type { Budget, Scenario } from './scenarios/index.js';
import { mixedP50s } from './scenarios/mixed.js';
import { difference, serverCpuUs, snapshot, totalCalls, type CommandStats } from './serverStats.js';
import { median } from './stats.js';
import { formatMetric } from './report/format.js';

interface Entrant {
  readonly contender: Contender;
  readonly group: ClientGroup;
  readonly locker: BenchLocker;
}

export async function runPlan(plan: Plan, urls: readonly string[], runId: string): Promise<TopologyResult[]> {
  const progress = new Progress(countMeasurements(plan));
  const topologies: TopologyResult[] = [];
  for (const nodes of plan.nodeCounts) {
    topologies.push(await runTopology(plan, urls.slice(0, nodes), `${runId}:${nodes}n`, progress));
  }
  return topologies;
}

function countMeasurements(plan: Plan): number {
  let total = 0;
  for (const scenario of plan.scenarios) {
    total += contendersFor(plan, scenario).length * plan.rounds(scenario) * plan.nodeCountsFor(scenario).length;
  }
  return total;
}

async function runTopology(plan: Plan, urls: readonly string[], prefix: string, progress: Progress): Promise<TopologyResult> {
  const admins: Redis[] = [];
  const entrants: Entrant[] = [];
  try {
    for (const url of urls) admins.push(await openAdminClient(url));
    for (const contender of plan.contenders) {
      const group = await openClients(urls, contender.client);
      entrants.push({ contender, group, locker: contender.create(group.clients) });
    }
    const scenarios: ScenarioResult[] = [];
    for (const scenario of plan.scenarios.filter((s) => plan.nodeCountsFor(s).includes(urls.length))) {
      const taking = entrants.filter((e) => contendersFor(plan, scenario).includes(e.contender));
      scenarios.push(await runScenario(plan, scenario, taking, admins, urls.length, `${prefix}:${scenario.id}`, progress));
    }
    return { nodes: urls.length, scenarios };
  } finally {
    for (const entrant of entrants) entrant.group.close();
    for (const admin of admins) admin.disconnect();
  }
}

async function runScenario(
  plan: Plan,
  scenario: Scenario,
  entrants: readonly Entrant[],
  admins: readonly Redis[],
  nodes: number,
  prefix: string,
  progress: Progress,
): Promise<ScenarioResult> {
  const results = new Map<Entrant, ContenderResult>();
  const totals = new Map<Entrant, { stats: CommandStats; cycles: number }>();
  for (const entrant of entrants) {
    const { contender } = entrant;
    results.set(entrant, emptyResult(contender, nodes));
    totals.set(entrant, { stats: new Map(), cycles: 0 });
  }

  const warmup = plan.warmup(scenario);
  if (warmup !== undefined) {
    for (const entrant of entrants) {
      await measure(scenario, entrant, admins, `${prefix}:warmup:${contenderKey(entrant.contender)}`, warmup, plan.ttlMs);
    }
  }

  const rounds = plan.rounds(scenario);
  for (let round = 0; round < rounds; round++) {
    for (const entrant of rotate(entrants, round)) {
      const key = contenderKey(entrant.contender);
      const outcome = await measure(scenario, entrant, admins, `${prefix}:r${round}:${key}`, plan.budget(scenario), plan.ttlMs);
      const result = results.get(entrant);
      const total = totals.get(entrant);
      if (result === undefined || total === undefined) continue;
      result.rounds.push(outcome.sample);
      total.cycles += outcome.cycles;
      for (const [name, entry] of outcome.commands) {
        const sum = total.stats.get(name) ?? { calls: 0, usec: 0 };
        sum.calls += entry.calls;
        sum.usec += entry.usec;
        total.stats.set(name, sum);
      }
      const headline = formatMetric(scenario.headline, outcome.sample[scenario.headline]);
      progress.step(
        `${nodes} node${nodes === 1 ? '' : 's'} · ${scenario.id} · round ${round + 1}/${rounds} · ${key}: ${headline} ${METRICS[scenario.headline].heading}`,
      );
      if (outcome.note !== undefined) {
        result.notes.push(`round ${round + 1}: ${outcome.note}`);
        progress.note(outcome.note);
      }
    }
  }

  const passes = plan.mixedPasses(scenario);
  const mixed = new Map<Entrant, number | undefined>();
  if (passes > 0) {
    const p50s = await mixedP50s(
      entrants.map((e) => ({ locker: e.locker, keyPrefix: `${prefix}:mixed:${contenderKey(e.contender)}`, quiet: () => e.group.quiet() })),
      passes,
      plan.ttlMs,
    );
    entrants.forEach((entrant, index) => mixed.set(entrant, p50s[index]));
    progress.note(`${nodes} node${nodes === 1 ? '' : 's'} · ${scenario.id} · ${passes} mixed passes done`);
  }

  for (const [entrant, result] of results) {
    result.median = medianSample(result.rounds);
    if (mixed.has(entrant)) result.median.mixedP50Us = mixed.get(entrant);
    const total = totals.get(entrant);
    if (total === undefined || total.cycles === 0) continue;
    for (const [name, entry] of total.stats) {
      result.commandsPerCycle[name] = entry.calls / total.cycles;
      result.usecPerCall[name] = entry.usec / entry.calls;
    }
  }
  return {
    id: scenario.id,
    title: scenario.title,
    kind: scenario.kind,
    headline: scenario.headline,
    columns: scenario.columns,
    rounds,
    budget: plan.budget(scenario),
    contenders: [...results.values()],
  };
}

interface Outcome {
  readonly sample: Sample;
  readonly cycles: number;
  readonly commands: CommandStats;
  readonly note: string | undefined;
}

/** One run of a scenario, with the commands it cost on the servers and on the wire. */
async function measure(
  scenario: Scenario,
  entrant: Entrant,
  admins: readonly Redis[],
  keyPrefix: string,
  budget: Budget,
  ttlMs: number,
): Promise<Outcome> {
  const before = await snapshot(admins);
  const serverCpuBefore = await serverCpuUs(admins);
  const requestsBefore = entrant.group.requests();
  const measured = await scenario.run({ locker: entrant.locker, keyPrefix, ttlMs, budget });
  const requests = entrant.group.requests() - requestsBefore;
  const serverCpu = (await serverCpuUs(admins)) - serverCpuBefore;
  const commands = difference(before, await snapshot(admins));
  const cycles = measured.cyclesTotal;
  return {
    sample: {
      ...measured.sample,
      reqsPerCycle: cycles > 0 ? requests / cycles : Number.NaN,
      cmdsPerCycle: cycles > 0 ? totalCalls(commands) / cycles : Number.NaN,
      redisUsPerCycle: cycles > 0 ? serverCpu / cycles : Number.NaN,
    },
    cycles,
    commands,
    note: measured.note,
  };
}

export function rotate<T>(items: readonly T[], by: number): T[] {
  const shift = items.length === 0 ? 0 : by % items.length;
  return [...items.slice(shift), ...items.slice(0, shift)];
}

export function medianSample(rounds: readonly Sample[]): Sample {
  const out: Sample = {};
  const ids = new Set(rounds.flatMap((sample) => Object.keys(sample) as MetricId[]));
  for (const id of ids) out[id] = median(rounds.map((sample) => sample[id] ?? Number.NaN));
  return out;
}
