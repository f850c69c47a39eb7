// quorumlock's diagnostics_channel events as OpenTelemetry spans and metrics,
// through @opentelemetry/api alone: whichever SDK your process registers
// (NodeSDK, a BasicTracerProvider, a vendor's) receives them.
//
// Run directly, it takes and releases a few locks on Redis at localhost:6379,
// records the spans and metrics in memory with the SDK's in-memory exporter
// and reader, and checks that they came out:
//
//   npx tsx opentelemetry.ts
//
// (In this repository: `npm run build && npx tsx examples/opentelemetry.ts`.)
// #region instrument
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { type Meter, metrics, SpanKind, SpanStatusCode, type Tracer, trace } from '@opentelemetry/api';
import type { AcquireEvent, EventNodeOutcome, ExtendEvent, LostEvent, ReleaseEvent } from 'quorumlock';

/**
 * Subscribes to quorumlock's channels: one span per acquire attempt, extend
 * and release, and metrics for their durations, failed nodes and lost locks.
 * Returns a function that unsubscribes.
 */
export function instrumentQuorumlock(
  tracer: Tracer = trace.getTracer('quorumlock'),
  meter: Meter = metrics.getMeter('quorumlock'),
): () => void {
  const durations = {
    acquire: meter.createHistogram('quorumlock.acquire.duration', { unit: 'ms', description: 'One acquire attempt, to its decision' }),
    extend: meter.createHistogram('quorumlock.extend.duration', { unit: 'ms', description: 'One extend, to its decision' }),
    release: meter.createHistogram('quorumlock.release.duration', { unit: 'ms', description: 'One release, to its decision' }),
  };
  const nodeFailures = meter.createCounter('quorumlock.node.failures', { description: 'Node requests that failed or timed out' });
  const lost = meter.createCounter('quorumlock.lock.lost', { description: 'Locks lost or expired while held' });

  // The events come once an operation is decided, with its duration: the span is
  // recorded after the fact, from its start (now less the duration) to now.
  const record = (name: string, durationMs: number, attributes: Record<string, string | number | boolean>, errorCode?: string) => {
    const end = performance.timeOrigin + performance.now();
    const span = tracer.startSpan(name, { kind: SpanKind.CLIENT, startTime: end - durationMs, attributes });
    if (errorCode !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: errorCode });
    span.end(end);
  };
  const countFailures = (operation: string, nodes: readonly EventNodeOutcome[]) => {
    for (const node of nodes) {
      if (node.status === 'error' || node.status === 'timeout') nodeFailures.add(1, { operation, node: node.node, status: node.status });
    }
  };

  const onAcquire = (message: unknown) => {
    const event = message as AcquireEvent;
    // Resource names go on spans only: as metric attributes they would make a series per key.
    record(
      'quorumlock.acquire',
      event.durationMs,
      {
        'quorumlock.resources': event.resources.join(','),
        'quorumlock.ttl_ms': event.ttlMs,
        'quorumlock.attempt': event.attempt,
        'quorumlock.granted': event.granted,
        'quorumlock.nodes_ok': event.nodes.filter((node) => node.status === 'ok').length,
        ...(event.passed ? { 'quorumlock.passed': true } : {}),
        ...(event.handedOff ? { 'quorumlock.handed_off': true } : {}),
      },
      // An attempt refused because the lock is held is contention, not an error: a span error only for the rest.
      event.granted || event.errorCode === 'QUORUMLOCK_LOCK_HELD' ? undefined : event.errorCode,
    );
    durations.acquire.record(event.durationMs, { granted: event.granted, ...(event.errorCode ? { 'error.code': event.errorCode } : {}) });
    countFailures('acquire', event.nodes);
  };
  const onExtend = (message: unknown) => {
    const event = message as ExtendEvent;
    record(
      'quorumlock.extend',
      event.durationMs,
      { 'quorumlock.resources': event.resources.join(','), 'quorumlock.ttl_ms': event.ttlMs, 'quorumlock.granted': event.granted },
      event.granted ? undefined : event.errorCode,
    );
    durations.extend.record(event.durationMs, { granted: event.granted });
    countFailures('extend', event.nodes);
  };
  const onRelease = (message: unknown) => {
    const event = message as ReleaseEvent;
    record('quorumlock.release', event.durationMs, {
      'quorumlock.resources': event.resources.join(','),
      'quorumlock.released': event.released,
      ...(event.passedOn ? { 'quorumlock.passed_on': true } : {}),
    });
    durations.release.record(event.durationMs);
    countFailures('release', event.nodes);
  };
  const onLost = (message: unknown) => {
    lost.add(1, { 'error.code': (message as LostEvent).errorCode });
  };

  const subscriptions = [
    ['quorumlock:acquire', onAcquire],
    ['quorumlock:extend', onExtend],
    ['quorumlock:release', onRelease],
    ['quorumlock:lost', onLost],
  ] as const;
  for (const [name, listener] of subscriptions) subscribe(name, listener);
  return () => {
    for (const [name, listener] of subscriptions) unsubscribe(name, listener);
  };
}
// #endregion instrument

// The rest runs this file as a program: an SDK that keeps what it records in memory.
import assert from 'node:assert/strict';
import { pathToFileURL } from 'node:url';
import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { Redis } from 'ioredis';
import { RedisLock } from 'quorumlock';

async function main(): Promise<void> {
  const spans = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
  const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 60_000 });
  const meterProvider = new MeterProvider({ readers: [reader] });
  const stop = instrumentQuorumlock(tracerProvider.getTracer('quorumlock'), meterProvider.getMeter('quorumlock'));

  const redis = new Redis();
  const locker = new RedisLock(redis);
  for (let i = 0; i < 3; i++) await locker.using('reports:nightly', 5_000, async () => undefined);
  stop();
  await redis.quit();

  await reader.forceFlush();
  const names = spans.getFinishedSpans().map((span) => span.name);
  assert.deepEqual(names, Array.from({ length: 3 }, () => ['quorumlock.acquire', 'quorumlock.release']).flat());
  const exported = metricExporter.getMetrics().flatMap((batch) => batch.scopeMetrics.flatMap((scope) => scope.metrics));
  const acquireDurations = exported.find((metric) => metric.descriptor.name === 'quorumlock.acquire.duration');
  assert.ok(acquireDurations, 'the acquire histogram was exported');
  console.log(`${names.length} spans; metrics: ${[...new Set(exported.map((metric) => metric.descriptor.name))].join(', ')}`);
  await Promise.all([tracerProvider.shutdown(), meterProvider.shutdown()]);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
