import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest';
import { instrumentQuorumlock } from '../../examples/opentelemetry.js';
import { ErrorCode, isQuorumLockError, RedisLock, Redlock } from '../../src/index.js';
import { type LocalNodeSet, startNodes } from '../support/harness.js';

// The diagnostics guide's OpenTelemetry example, run against real Redis with
// the SDK's in-memory span exporter and metric exporter.

let nodes: LocalNodeSet;
beforeAll(async () => {
  nodes = await startNodes(3);
});
afterAll(async () => {
  await nodes.stopAll();
});

let spans: InMemorySpanExporter;
let tracerProvider: BasicTracerProvider;
let metricExporter: InMemoryMetricExporter;
let reader: PeriodicExportingMetricReader;
let meterProvider: MeterProvider;
let stop: () => void;
beforeEach(async () => {
  await nodes.flushAll();
  spans = new InMemorySpanExporter();
  tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
  metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  reader = new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 600_000 });
  meterProvider = new MeterProvider({ readers: [reader] });
  stop = instrumentQuorumlock(tracerProvider.getTracer('test'), meterProvider.getMeter('test'));
});
afterEach(async () => {
  stop();
  await Promise.all([tracerProvider.shutdown(), meterProvider.shutdown()]);
});

/** The metrics exported so far, by name. */
async function exportedMetrics() {
  await reader.forceFlush();
  const all = metricExporter.getMetrics().flatMap((batch) => batch.scopeMetrics.flatMap((scope) => scope.metrics));
  return new Map(all.map((metric) => [metric.descriptor.name, metric]));
}

it('records a span per acquire attempt and release, timed from the event, and the acquire histogram', async () => {
  const clients = nodes.clients();
  const redlock = new Redlock(clients);
  const before = performance.timeOrigin + performance.now();
  await redlock.using('otel:orders', 5_000, async () => undefined);
  const after = performance.timeOrigin + performance.now();

  const finished = spans.getFinishedSpans();
  expect(finished.map((span) => span.name)).toEqual(['quorumlock.acquire', 'quorumlock.release']);
  const [acquire] = finished;
  expect(acquire?.kind).toBe(SpanKind.CLIENT);
  expect(acquire?.attributes).toMatchObject({
    'quorumlock.resources': 'otel:orders',
    'quorumlock.ttl_ms': 5_000,
    'quorumlock.attempt': 1,
    'quorumlock.granted': true,
  });
  expect(acquire?.attributes['quorumlock.nodes_ok']).toBeGreaterThanOrEqual(2);
  expect(acquire?.status.code).toBe(SpanStatusCode.UNSET);
  // Start and end lie within the call: the span was placed from the event's duration.
  const startMs = (acquire?.startTime[0] ?? 0) * 1000 + (acquire?.startTime[1] ?? 0) / 1e6;
  const endMs = (acquire?.endTime[0] ?? 0) * 1000 + (acquire?.endTime[1] ?? 0) / 1e6;
  expect(startMs).toBeGreaterThanOrEqual(before - 1);
  expect(endMs).toBeLessThanOrEqual(after + 1);
  expect(endMs).toBeGreaterThanOrEqual(startMs);

  const metrics = await exportedMetrics();
  const histogram = metrics.get('quorumlock.acquire.duration');
  expect(histogram?.descriptor.unit).toBe('ms');
  expect(histogram?.dataPoints).toEqual([expect.objectContaining({ attributes: { granted: true }, value: expect.objectContaining({ count: 1 }) })]);
  expect(metrics.get('quorumlock.release.duration')?.dataPoints).toHaveLength(1);
});

it('marks an attempt on unreachable nodes as a span error and counts the failed nodes', async () => {
  const clients = nodes.clients();
  // Two of three nodes down: no quorum, whatever the third says.
  await Promise.all([nodes.node(1).kill(), nodes.node(2).kill()]);
  try {
    const redlock = new Redlock(clients, { nodeTimeoutMs: 50 });
    const error = await redlock.tryAcquire('otel:down', 5_000).catch((caught: unknown) => caught);
    expect(isQuorumLockError(error, ErrorCode.QUORUM_UNREACHABLE)).toBe(true);
  } finally {
    await Promise.all([nodes.node(1).restart(), nodes.node(2).restart()]);
  }

  const [acquire] = spans.getFinishedSpans();
  expect(acquire?.name).toBe('quorumlock.acquire');
  expect(acquire?.attributes['quorumlock.granted']).toBe(false);
  expect(acquire?.status).toEqual({ code: SpanStatusCode.ERROR, message: ErrorCode.QUORUM_UNREACHABLE });
  const failures = (await exportedMetrics()).get('quorumlock.node.failures');
  const failed = failures?.dataPoints.reduce((sum, point) => sum + Number(point.value), 0);
  expect(failed).toBeGreaterThanOrEqual(2);
});

it('counts a lock lost while held, by its code', async () => {
  const [client] = nodes.clients();
  if (client === undefined) throw new Error('no client');
  const locker = new RedisLock(client);
  const lock = await locker.acquire('otel:lost', 5_000);
  await client.del('otel:lost'); // someone cleared our key
  await expect(lock.extend(5_000)).rejects.toMatchObject({ code: ErrorCode.LOCK_LOST });

  const extend = spans.getFinishedSpans().find((span) => span.name === 'quorumlock.extend');
  expect(extend?.status).toEqual({ code: SpanStatusCode.ERROR, message: ErrorCode.LOCK_LOST });
  const lost = (await exportedMetrics()).get('quorumlock.lock.lost');
  expect(lost?.dataPoints).toEqual([expect.objectContaining({ attributes: { 'error.code': ErrorCode.LOCK_LOST }, value: 1 })]);
  await lock.release();
});

it('records nothing once unsubscribed', async () => {
  stop();
  const [client] = nodes.clients();
  if (client === undefined) throw new Error('no client');
  await new RedisLock(client).using('otel:quiet', 5_000, async () => undefined);
  expect(spans.getFinishedSpans()).toEqual([]);
  expect((await exportedMetrics()).get('quorumlock.acquire.duration')?.dataPoints ?? []).toEqual([]);
});
