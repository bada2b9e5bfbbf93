import fc from 'fast-check';
import { exchange, render, type Answer } from './client.js';
import { startEnvironment, type FuzzEnvironment } from './environment.js';
import { fuzzRequest } from './generators.js';
import { APPS, type FuzzRequest } from './model.js';
import { addedEncoding, judge, judgeArrival, type Violation } from './oracle.js';

export interface FuzzOptions {
  /** How many generated requests. */
  count: number;
  /** The run's seed; request i is generated from seedOf(seed, i), so any one can be replayed alone. */
  seed: number;
  /** Requests in flight at once. */
  concurrency: number;
  /** Health checks (process alive, /healthz, bob's sessions) after every `batch` requests. */
  batch: number;
  /** Shrink the first example of each kind of finding (sequential requests; bounded in time). */
  shrinkMs: number;
  /** Progress lines. */
  log?: (line: string) => void;
}

export interface Finding {
  rule: Violation['rule'];
  kind: string;
  count: number;
  /** The first request that showed it: its index, its own seed, the request, and the shrunk one. */
  index: number;
  requestSeed: number;
  detail: string;
  request: string;
  shrunk?: string;
  shrunkDetail?: string;
}

export interface FuzzReport {
  seed: number;
  requests: number;
  durationMs: number;
  perSecond: number;
  /** Answers by surface and status ("app 200", "forward-auth 401", "raw closed"). */
  answers: Record<string, number>;
  /** Requests that reached an upstream. */
  reachedUpstream: number;
  /** Proxied answers Gatehouse compressed (the oracle judged each: only where due). */
  compressedAnswers: number;
  findings: Finding[];
}

/** The seed of request i of a run: independent per request, so one request replays (and shrinks) alone. */
export function seedOf(seed: number, index: number): number {
  return (Math.imul(seed ^ 0x5bd1e995, 0x9e3779b1) + Math.imul(index + 1, 0x85ebca6b)) | 0;
}

export function requestAt(seed: number, index: number): FuzzRequest {
  return fc.sample(fuzzRequest, { seed: seedOf(seed, index), numRuns: 1 })[0]!;
}

let nextId = 0;

/** Sends one request and judges the answer and what it made reach the apps. */
async function execute(env: FuzzEnvironment, request: FuzzRequest, allowedOrigins: ReadonlySet<string>): Promise<{ answer: Answer; violations: Violation[]; reached: number; compressed: boolean }> {
  const id = `f${++nextId}`;
  const answer = await exchange(env.port, request, render(request, env.bindings, id));
  const arrivals = env.upstreams.take(id);
  // Untagged arrivals (a request smuggled inside another) come from raw requests only.
  if (request.surface === 'raw') arrivals.push(...env.upstreams.takeUntagged());
  return { answer, violations: judge(request, answer, arrivals, { allowedOrigins }), reached: arrivals.length, compressed: addedEncoding(answer, arrivals) !== undefined };
}

/** The request as written, readable: cookies and tokens by name, long values cut. */
export function describe(request: FuzzRequest): string {
  const text = request.raw ?? [`${request.method} ${request.target} HTTP/1.1`, ...request.headers.map(([n, v]) => `${n}: ${v}`), '', request.body].join('\r\n');
  const shown = JSON.stringify(text.length > 600 ? `${text.slice(0, 600)}…(${text.length} chars)` : text);
  return `[${request.surface}, ${request.peer} peer, credential ${request.credential}${request.servedApp ? `, app ${request.servedApp}` : ''}${request.logoutToken ? `, logout_token ${JSON.stringify(request.logoutToken.value.slice(0, 80))}` : ''}] ${shown}`;
}

const signature = (v: Violation) => `${v.rule} · ${v.kind}`;

/** Health after a batch: the process is alive, /healthz answers 200, bob's session still opens wiki. */
async function health(env: FuzzEnvironment): Promise<Violation[]> {
  if (!env.alive()) return [{ rule: 'crash', kind: 'process exited', detail: env.stderrTail().slice(-2_000) }];
  const probe = (target: string, host: string, cookie?: string): FuzzRequest => ({
    surface: 'portal',
    peer: 'untrusted',
    method: 'GET',
    target,
    headers: [['Host', host], ...(cookie ? ([['Cookie', cookie]] as Array<[string, string]>) : [])],
    body: '',
    credential: 'none',
  });
  const found: Violation[] = [];
  const healthz = await exchange(env.port, probe('/healthz', `localhost:${env.port}`), render(probe('/healthz', `localhost:${env.port}`), env.bindings, 'health'), 10_000);
  if (healthz.status !== 200) found.push({ rule: 'health', kind: '/healthz', detail: `/healthz answered ${healthz.status}` });
  const wiki = probe('/private/health-probe', `${APPS.wiki.hostname}:${env.port}`, `gatehouse_app=${env.bindings.wikiCookie}`);
  const opened = await exchange(env.port, wiki, render(wiki, env.bindings, 'probe'), 10_000);
  env.upstreams.take('probe');
  if (opened.status !== 200) {
    found.push({ rule: 'session-lost', kind: "bob's wiki session", detail: `a fuzz request in this batch ended bob's session (wiki answered ${opened.status}); signed in again` });
    await env.signIn();
  }
  return found;
}

export async function runFuzz(options: FuzzOptions): Promise<FuzzReport> {
  const log = options.log ?? (() => {});
  const env = await startEnvironment();
  const allowedOrigins = new Set([env.portal, env.idp.issuer, ...Object.values(APPS).map((app) => `http://${app.hostname}:${env.port}`)]);
  const answers: Record<string, number> = {};
  const findings = new Map<string, Finding & { value: FuzzRequest }>();
  let reachedUpstream = 0;
  let compressedAnswers = 0;
  const record = (index: number, request: FuzzRequest, violations: Violation[]) => {
    for (const violation of violations) {
      const key = signature(violation);
      const known = findings.get(key);
      if (known) known.count++;
      else findings.set(key, { rule: violation.rule, kind: violation.kind, count: 1, index, requestSeed: seedOf(options.seed, index), detail: violation.detail, request: describe(request), value: request });
    }
  };
  const started = Date.now();
  let crashed = false;
  try {
    for (let batchStart = 0; batchStart < options.count && !crashed; batchStart += options.batch) {
      const end = Math.min(options.count, batchStart + options.batch);
      let next = batchStart;
      const worker = async () => {
        while (next < end) {
          const index = next++;
          const request = requestAt(options.seed, index);
          const { answer, violations, reached, compressed } = await execute(env, request, allowedOrigins);
          reachedUpstream += reached;
          if (compressed) compressedAnswers++;
          const code = answer.status >= 400 ? (/"code":"([A-Za-z_]+)"|Error <code>([a-z_]+)<\/code>/.exec(answer.body)?.slice(1).find(Boolean) ?? '') : '';
          const status = answer.status === 0 ? 'closed' : answer.status === -1 ? 'timeout' : `${answer.status}${code ? ` ${code}` : ''}`;
          answers[`${request.surface} ${status}`] = (answers[`${request.surface} ${status}`] ?? 0) + 1;
          record(index, request, violations);
        }
      };
      await Promise.all(Array.from({ length: options.concurrency }, worker));
      // Anything smuggled that no raw request claimed, judged on its own.
      for (const arrival of env.upstreams.takeUntagged()) {
        for (const violation of judgeArrival(arrival, undefined)) record(batchStart, requestAt(options.seed, batchStart), [{ ...violation, kind: `${violation.kind} (untagged)` }]);
      }
      const healthFindings = await health(env);
      record(batchStart, requestAt(options.seed, batchStart), healthFindings);
      crashed = healthFindings.some((v) => v.rule === 'crash');
      log(`${end}/${options.count} requests, ${findings.size} kinds of finding, ${Math.round((end * 1000) / (Date.now() - started))} req/s`);
    }
    const durationMs = Date.now() - started;

    // Shrink the first example of each kind: the smallest request still showing the same kind.
    const deadline = Date.now() + options.shrinkMs;
    if (!crashed) {
      for (const finding of findings.values()) {
        if (Date.now() >= deadline || ['crash', 'health', 'session-lost'].includes(finding.rule) || finding.kind.endsWith('(untagged)')) continue;
        const key = `${finding.rule} · ${finding.kind}`;
        const result = await fc.check(
          fc.asyncProperty(fuzzRequest, async (request) => !(await execute(env, request, allowedOrigins)).violations.some((v) => signature(v) === key)),
          { seed: finding.requestSeed, numRuns: 1, interruptAfterTimeLimit: Math.max(1, deadline - Date.now()), markInterruptAsFailure: false },
        );
        const shrunk = result.counterexample?.[0];
        if (shrunk) {
          finding.shrunk = describe(shrunk);
          const again = await execute(env, shrunk, allowedOrigins);
          finding.shrunkDetail = again.violations.find((v) => signature(v) === key)?.detail;
        }
      }
    }

    return {
      seed: options.seed,
      requests: options.count,
      durationMs,
      perSecond: Math.round((options.count * 1000) / durationMs),
      answers: Object.fromEntries(Object.entries(answers).sort(([a], [b]) => a.localeCompare(b))),
      reachedUpstream,
      compressedAnswers,
      findings: [...findings.values()].map(({ value: _value, ...finding }) => finding).sort((a, b) => a.rule.localeCompare(b.rule) || b.count - a.count),
    };
  } finally {
    await env.close();
  }
}

/** A report as text: the figures, then each kind of finding with its first example and the shrunk one. */
export function formatReport(report: FuzzReport): string {
  const lines = [
    `seed ${report.seed}: ${report.requests} requests in ${(report.durationMs / 1000).toFixed(1)} s (${report.perSecond} req/s), ${report.reachedUpstream} reached an upstream, ${report.compressedAnswers} answers compressed`,
    `answers: ${Object.entries(report.answers).map(([k, v]) => `${k}: ${v}`).join(', ')}`,
    report.findings.length === 0 ? 'findings: none' : `findings: ${report.findings.length} kinds`,
  ];
  for (const f of report.findings) {
    lines.push('', `✗ ${f.rule} · ${f.kind} — ${f.count}×; first: request ${f.index} (replay: npm run fuzz -- --seed ${report.seed} --only ${f.index})`, `  ${f.detail}`, `  request: ${f.request}`);
    if (f.shrunk) lines.push(`  shrunk:  ${f.shrunk}`, `           ${f.shrunkDetail ?? ''}`);
  }
  return lines.join('\n');
}

/** Replays one request of a run and shows the request, the answer and the verdict. */
export async function replay(seed: number, index: number): Promise<string> {
  const env = await startEnvironment();
  try {
    const allowedOrigins = new Set([env.portal, env.idp.issuer, ...Object.values(APPS).map((app) => `http://${app.hostname}:${env.port}`)]);
    const request = requestAt(seed, index);
    const { answer, violations } = await execute(env, request, allowedOrigins);
    return [
      `request ${index} of seed ${seed} (its own seed ${seedOf(seed, index)}):`,
      describe(request),
      `answer: ${answer.status} ${JSON.stringify(Object.fromEntries(answer.headers))}`,
      `body: ${answer.body.slice(0, 400)}`,
      violations.length === 0 ? 'verdict: fine' : violations.map((v) => `✗ ${v.rule} · ${v.kind}: ${v.detail}`).join('\n'),
    ].join('\n');
  } finally {
    await env.close();
  }
}
