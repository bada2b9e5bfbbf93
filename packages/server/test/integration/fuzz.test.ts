import { describe, expect, it } from 'vitest';
import { formatReport, runFuzz } from '../fuzz/run.js';

/**
 * A seeded sample of the fuzz run (`npm run fuzz` sends 100,000): hostile requests to every public
 * endpoint — portal, API, sign-in and callback, back-channel logout, app hosts, forward-auth — against
 * the real Gatehouse process, the development IdP and recording upstreams. Threats: public-path and
 * forward-auth bypasses (dot segments, encodings, commas, `;`, `#`, Host and X-Forwarded-* games),
 * spoofed identity and rewrite headers, CSRF, open redirects, forged logout tokens, crashes and 5xx,
 * and BREACH (a compressed answer to a request that is not the app's own: Sec-Fetch-Site).
 * The oracle (test/fuzz/oracle.ts) judges with its own model, never with Gatehouse's code. A failure
 * prints the seed, each kind of finding with its first request and the shrunk one; replay one with
 * `npm run fuzz -- --seed <seed> --only <index>`. FUZZ_SEED and FUZZ_COUNT override the sample.
 */
const seed = Number(process.env.FUZZ_SEED ?? 20_260_516);
const count = Number(process.env.FUZZ_COUNT ?? 2_000);

describe('fuzz sample of every public endpoint', () => {
  it(
    `${count} generated requests (seed ${seed}): no 5xx, no crash, no allow where a deny was due, errors in the catalogue's format`,
    async () => {
      const report = await runFuzz({ count, seed, concurrency: 4, batch: 500, shrinkMs: 8_000 });
      expect(report.requests).toBe(count);
      expect(report.findings, formatReport(report)).toEqual([]);
      // The compression rule judged real compressed answers, not none (the generators ask for them).
      expect(report.compressedAnswers, formatReport(report)).toBeGreaterThan(0);
    },
    120_000,
  );
});
