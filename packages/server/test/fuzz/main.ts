import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { formatReport, replay, runFuzz } from './run.js';

/**
 * `npm run fuzz -- [--count 100000] [--seed N] [--concurrency 4] [--only I] [--json FILE]`: the fuzz run
 * of every public endpoint against the real Gatehouse (see README.md). Exits 1 when anything was found.
 */
const { values } = parseArgs({
  options: {
    count: { type: 'string', default: '100000' },
    seed: { type: 'string' },
    concurrency: { type: 'string', default: '4' },
    batch: { type: 'string', default: '1000' },
    'shrink-seconds': { type: 'string', default: '120' },
    only: { type: 'string' },
    json: { type: 'string' },
  },
});

const seed = values.seed !== undefined ? Number(values.seed) : Math.floor(Math.random() * 2 ** 31);
if (!Number.isInteger(seed)) throw new Error('--seed must be an integer');

if (values.only !== undefined) {
  console.log(await replay(seed, Number(values.only)));
} else {
  const count = Number(values.count);
  console.log(`fuzzing ${count} requests, seed ${seed} (replay with --seed ${seed})`);
  const report = await runFuzz({
    count,
    seed,
    concurrency: Number(values.concurrency),
    batch: Number(values.batch),
    shrinkMs: Number(values['shrink-seconds']) * 1000,
    log: (line) => console.log(line),
  });
  console.log(`\n${formatReport(report)}`);
  if (values.json) writeFileSync(values.json, `${JSON.stringify(report, null, 2)}\n`);
  process.exitCode = report.findings.length > 0 ? 1 : 0;
}
