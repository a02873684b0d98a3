// The Grafana dashboard (deploy/grafana/lws-temporal.json) against what the processes really export: a panel that
// queries a misspelled or renamed metric shows "No data" instead of failing, so this test is where it fails.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { AdmissionMetrics, TriggerMetrics, WorkerMetrics } from '../../src/observability/metrics.js';
import { repoRoot } from '../../tools/stack/paths.js';

interface Target {
  expr?: string;
  datasource?: { type?: string; uid?: string };
}
interface Panel {
  type: string;
  title?: string;
  description?: string;
  datasource?: { type?: string; uid?: string };
  gridPos: { h: number; w: number; x: number; y: number };
  fieldConfig?: { defaults?: { unit?: string } };
  targets?: Target[];
}
interface Variable {
  name: string;
  type: string;
  query?: string | { query?: string };
  datasource?: { type?: string; uid?: string };
}
interface Dashboard {
  schemaVersion: number;
  panels: Panel[];
  templating: { list: Variable[] };
}

const dashboardPath = join(repoRoot, 'deploy', 'grafana', 'lws-temporal.json');
const dashboardText = readFileSync(dashboardPath, 'utf8');
const DATASOURCE = { type: 'prometheus', uid: '${datasource}' };

/**
 * The Temporal SDK's metrics, as its Prometheus exporter names them with the options of src/worker/sdk-logging.ts:
 * the prefix `temporal_` and the exporter's defaults (@temporalio/worker lib/runtime-options.js): counters without
 * `_total`, durations as histograms in milliseconds without a unit suffix. Defined, for @temporalio/core-bridge 1.24.0
 * (the SDK version in package.json), in sdk-core's crates/sdk-core/src/telemetry/metrics.rs (worker),
 * crates/common/src/telemetry/metrics.rs (the latency histograms' names) and crates/client/src/metrics.rs (requests);
 * the package ships that source, and a test below checks each name is still defined there.
 * test/e2e/grafana-sdk-metrics.test.ts checks the dashboard's against a real worker's endpoint.
 */
const SDK_METRICS: Record<string, 'counter' | 'gauge' | 'histogram'> = {
  workflow_completed: 'counter',
  workflow_canceled: 'counter',
  workflow_failed: 'counter',
  workflow_continue_as_new: 'counter',
  workflow_endtoend_latency: 'histogram',
  workflow_task_queue_poll_empty: 'counter',
  workflow_task_queue_poll_succeed: 'counter',
  workflow_task_execution_failed: 'counter',
  workflow_task_schedule_to_start_latency: 'histogram',
  workflow_task_replay_latency: 'histogram',
  workflow_task_execution_latency: 'histogram',
  activity_poll_no_task: 'counter',
  activity_task_received: 'counter',
  activity_execution_failed: 'counter',
  activity_schedule_to_start_latency: 'histogram',
  activity_execution_latency: 'histogram',
  activity_succeed_endtoend_latency: 'histogram',
  local_activity_execution_cancelled: 'counter',
  local_activity_execution_failed: 'counter',
  local_activity_execution_latency: 'histogram',
  local_activity_succeed_endtoend_latency: 'histogram',
  local_activity_total: 'counter',
  worker_start: 'counter',
  num_pollers: 'gauge',
  worker_task_slots_available: 'gauge',
  worker_task_slots_used: 'gauge',
  sticky_cache_hit: 'counter',
  sticky_cache_miss: 'counter',
  sticky_cache_size: 'gauge',
  sticky_cache_total_forced_eviction: 'counter',
  request: 'counter',
  request_failure: 'counter',
  long_request: 'counter',
  long_request_failure: 'counter',
  request_latency: 'histogram',
  long_request_latency: 'histogram',
};
const sdkCoreDir = join(repoRoot, 'node_modules', '@temporalio', 'core-bridge', 'sdk-core', 'crates');
const SDK_SOURCES = ['sdk-core/src/telemetry/metrics.rs', 'common/src/telemetry/metrics.rs', 'client/src/metrics.rs'];

/** The series a metric family of that type puts on a /metrics page. */
function seriesNames(name: string, type: string): string[] {
  if (type === 'histogram') return [`${name}_bucket`, `${name}_sum`, `${name}_count`];
  if (type === 'summary') return [name, `${name}_sum`, `${name}_count`];
  return [name];
}

/** Every series name a panel may query. */
async function exportedSeries(): Promise<Set<string>> {
  const known = new Set<string>();
  const fresh = new Registry();
  collectDefaultMetrics({ register: fresh });
  for (const registry of [
    new WorkerMetrics().registry,
    new TriggerMetrics().registry,
    new AdmissionMetrics().registry,
    fresh,
  ]) {
    for (const metric of await registry.getMetricsAsJSON()) {
      // prom-client's typings say a number; at run time the type is its name ('counter', 'histogram', ...).
      for (const series of seriesNames(metric.name, String(metric.type))) known.add(series);
    }
  }
  for (const [name, type] of Object.entries(SDK_METRICS)) {
    for (const series of seriesNames(`temporal_${name}`, type)) known.add(series);
  }
  // Prometheus itself writes `up` for every scrape target.
  known.add('up');
  return known;
}

const PROMQL_KEYWORDS = new Set(['and', 'or', 'unless', 'bool', 'offset', 'inf', 'nan']);

/**
 * The metric names a PromQL expression selects: what is left once strings, label matchers, ranges, label lists
 * (by, without, on, ignoring, group_*) and function calls are taken out.
 */
function metricNames(expr: string): string[] {
  const rest = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const names: string[] = [];
  for (const match of rest.matchAll(/(?<![\w.])[A-Za-z_:][\w:]*/g)) {
    const after = rest.slice(match.index + match[0].length).trimStart();
    if (after.startsWith('(') || PROMQL_KEYWORDS.has(match[0].toLowerCase())) continue;
    names.push(match[0]);
  }
  return names;
}

/** Every PromQL text of the dashboard with where it is: panel targets, and the selector of label_values() variables. */
function queries(dashboard: Dashboard): { where: string; expr: string }[] {
  const found: { where: string; expr: string }[] = [];
  for (const panel of dashboard.panels) {
    for (const target of panel.targets ?? []) {
      if (target.expr) found.push({ where: `panel "${panel.title}"`, expr: target.expr });
    }
  }
  for (const variable of dashboard.templating.list) {
    if (variable.type !== 'query') continue;
    const query = typeof variable.query === 'string' ? variable.query : (variable.query?.query ?? '');
    const labelValues = /^label_values\((.*),\s*\w+\)$/.exec(query);
    found.push({ where: `variable $${variable.name}`, expr: labelValues ? labelValues[1]! : query });
  }
  return found;
}

/** A line per metric name the dashboard queries that no process exports. */
function unknownMetrics(dashboard: Dashboard, known: Set<string>): string[] {
  const problems: string[] = [];
  for (const { where, expr } of queries(dashboard)) {
    for (const name of metricNames(expr)) {
      if (!known.has(name)) problems.push(`${where}: ${name} is not exported`);
    }
  }
  return problems;
}

describe('Grafana dashboard deploy/grafana/lws-temporal.json', () => {
  const dashboard = JSON.parse(dashboardText) as Dashboard;
  const content = dashboard.panels.filter((p) => p.type !== 'row');
  let known: Set<string>;

  before(async () => {
    known = await exportedSeries();
  });

  it('parses, with schema version 39 or later (Grafana 10.4 on) and panels to show', () => {
    assert.ok(dashboard.schemaVersion >= 39, `schemaVersion ${dashboard.schemaVersion}`);
    assert.ok(content.length > 0);
  });

  it('has a Prometheus data source variable, and every query variable reads through it', () => {
    const variables = dashboard.templating.list;
    assert.deepEqual(
      variables.filter((v) => v.name === 'datasource').map((v) => [v.type, v.query]),
      [['datasource', 'prometheus']],
    );
    for (const variable of variables.filter((v) => v.type === 'query')) {
      assert.deepEqual(variable.datasource, DATASOURCE, `variable $${variable.name}`);
    }
  });

  const panelChecks: [string, (panel: Panel) => boolean][] = [
    ['a title', (p) => (p.title ?? '').trim().length > 0],
    ['a description', (p) => (p.description ?? '').trim().length > 0],
    ['a unit', (p) => (p.fieldConfig?.defaults?.unit ?? '').length > 0],
    ['the data source variable', (p) => p.datasource?.type === 'prometheus' && p.datasource.uid === '${datasource}'],
    [
      'the data source variable on each query',
      (p) => (p.targets ?? []).every((t) => !t.datasource || t.datasource.uid === '${datasource}'),
    ],
    ['at least one query', (p) => (p.targets ?? []).some((t) => (t.expr ?? '').length > 0)],
  ];
  for (const [what, check] of panelChecks) {
    it(`every panel has ${what}`, () => {
      assert.deepEqual(
        content.filter((p) => !check(p)).map((p) => p.title ?? `(untitled ${p.type})`),
        [],
      );
    });
  }

  it('every row has a title', () => {
    assert.deepEqual(
      dashboard.panels.filter((p) => p.type === 'row' && !p.title),
      [],
    );
  });

  it('every metric a query names is one a process exports', () => {
    assert.deepEqual(unknownMetrics(dashboard, known), []);
  });

  it('every selector filters on the namespace and pod variables', () => {
    const unfiltered: string[] = [];
    for (const { where, expr } of queries(dashboard)) {
      // $namespace lists the namespaces themselves; the other variables narrow down within one.
      if (where === 'variable $namespace') continue;
      const needs = where.startsWith('variable')
        ? ['namespace=~"$namespace"']
        : ['namespace=~"$namespace"', 'pod=~"$pod"'];
      // A metric name without a matcher block would escape the filters: each name must have one.
      const selectors = [...expr.matchAll(/([A-Za-z_:][\w:]*)\{([^}]*)\}/g)];
      if (selectors.length !== metricNames(expr).length) unfiltered.push(`${where}: a selector without {...}`);
      for (const [, name, matchers] of selectors) {
        for (const need of needs) if (!matchers!.includes(need)) unfiltered.push(`${where}: ${name} lacks ${need}`);
      }
    }
    assert.deepEqual(unfiltered, []);
  });

  it('quantile panels show the unit their histogram counts in: the SDK milliseconds, this project seconds', () => {
    const wrong: string[] = [];
    for (const panel of content) {
      const exprs = (panel.targets ?? []).map((t) => t.expr ?? '');
      if (!exprs.every((e) => e.startsWith('histogram_quantile('))) continue;
      const want = exprs.some((e) => /\btemporal_/.test(e)) ? 'ms' : 's';
      if (panel.fieldConfig?.defaults?.unit !== want) wrong.push(`${panel.title}: want ${want}`);
    }
    assert.deepEqual(wrong, []);
  });

  it('lays the panels out within 24 columns, none on top of another', () => {
    const cells = new Map<string, string>();
    const clashes: string[] = [];
    for (const { title, gridPos: g } of dashboard.panels) {
      if (g.x < 0 || g.x + g.w > 24) clashes.push(`${title}: past column 24`);
      for (let y = g.y; y < g.y + g.h; y++) {
        for (let x = g.x; x < g.x + g.w; x++) {
          const other = cells.get(`${x},${y}`);
          if (other && other !== title) clashes.push(`${title} overlaps ${other}`);
          cells.set(`${x},${y}`, title ?? '');
        }
      }
    }
    assert.deepEqual([...new Set(clashes)], []);
  });

  // The check above must be able to fail: each of these edits of the dashboard must be reported.
  const misspellings: [string, string, string][] = [
    ['a misspelled histogram', 'lws_teardown_duration_seconds_bucket', 'lws_teardown_duration_second_bucket'],
    ['a histogram without its _bucket series', 'lws_trigger_reaction_seconds_bucket', 'lws_trigger_reaction_seconds'],
    ['a misspelled SDK gauge', 'temporal_sticky_cache_size', 'temporal_sticky_cache_sizes'],
    [
      'an SDK counter with the _total this exporter does not add',
      'temporal_workflow_task_queue_poll_succeed',
      'temporal_workflow_task_queue_poll_succeed_total',
    ],
    ['a default metric without its unit', 'nodejs_eventloop_lag_p99_seconds', 'nodejs_eventloop_lag_p99'],
    [
      'a misspelled metric in a variable',
      'label_values(lws_kube_api_retries_total',
      'label_values(lws_kube_api_retry_total',
    ],
  ];
  for (const [what, from, to] of misspellings) {
    it(`reports ${what} (${to})`, () => {
      assert.ok(dashboardText.includes(from), `the dashboard no longer uses ${from}: pick another example`);
      const edited = JSON.parse(dashboardText.replaceAll(from, to)) as Dashboard;
      const problems = unknownMetrics(edited, known);
      const misspelled = metricNames(to.replace(/^label_values\(/, ''))[0]!;
      assert.ok(
        problems.some((p) => p.endsWith(`${misspelled} is not exported`)),
        `not reported: ${misspelled}; got ${JSON.stringify(problems)}`,
      );
    });
  }

  const extraction: [string, string[]][] = [
    ['sum by (le, policy) (rate(a_bucket{x="y{z}"}[$__rate_interval]))', ['a_bucket']],
    ['sum(rate(a{b=~"c"}[5m])) / sum(rate(d[5m] offset 1h)) * 60', ['a', 'd']],
    ['max by (job) (up) and on (pod) bare', ['up', 'bare']],
    ['histogram_quantile(0.95, sum(rate(h_bucket{}[1m])) without (instance))', ['h_bucket']],
  ];
  for (const [expr, want] of extraction) {
    it(`finds the metrics of ${expr}`, () => assert.deepEqual(metricNames(expr), want));
  }

  it('lists only SDK metrics the sdk-core source of the installed SDK defines', () => {
    const bridge = JSON.parse(
      readFileSync(join(repoRoot, 'node_modules', '@temporalio', 'core-bridge', 'package.json'), 'utf8'),
    ) as { version: string };
    const ours = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    assert.equal(bridge.version, ours.dependencies['@temporalio/worker'], 'the SDK source read is not the SDK in use');
    const source = SDK_SOURCES.map((file) => readFileSync(join(sdkCoreDir, file), 'utf8')).join('\n');
    assert.deepEqual(
      Object.keys(SDK_METRICS).filter((name) => !source.includes(`"${name}"`)),
      [],
    );
  });
});
