/**
 * The sign-in page as a person on a slow phone connection gets it: Debian's Chromium, driven through
 * playwright-core, with Chrome DevTools' "Fast 3G" network profile emulated (CDP) and the CPU as it
 * is, a fresh browser profile (cold cache) for every load. It prints the JavaScript and CSS the page
 * loads (bytes transferred, as the browser received them, and once decoded; and what a client taking
 * only gzip is sent), the first contentful paint and when the first provider button showed, as medians
 * of several loads, beside the budgets. A measurement, not a test: it exits 0 whatever the figures.
 * `npm run build && npm run bench:web` (it builds nothing itself). See bench/README.md, "Sign-in page".
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startGatehouse } from './lib/gatehouse.js';
import { httpGet } from './lib/http.js';
import { freePort, ProcessGroup } from './lib/processes.js';
import { fixed, median, table, thousands } from './lib/stats.js';

const root = fileURLToPath(new URL('..', import.meta.url));

/**
 * DevTools' "Fast 3G" (its network presets): 150 ms round trip ×3.75 as the added latency, 1.6 Mbit/s
 * down and 750 kbit/s up, each ×0.9, in bytes per second.
 */
const FAST_3G = { offline: false, latency: 150 * 3.75, downloadThroughput: ((1.6 * 1024 * 1024) / 8) * 0.9, uploadThroughput: ((750 * 1024) / 8) * 0.9 };
const BUDGET = { jsGzipBytes: 80 * 1024, firstRenderMs: 1_000 };
const LOADS = Number(process.env.BENCH_WEB_LOADS ?? 5);

const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

interface Transfer {
  url: string;
  type: string;
  /** On the wire, headers included, as DevTools' "transferred". */
  transferred: number;
  /** The body once decoded. */
  decoded: number;
}

interface Load {
  transfers: Transfer[];
  firstContentfulPaintMs: number;
  buttonVisibleMs: number;
}

/**
 * When the first "Sign in with …" link appeared, seen from inside the page (no polling from outside).
 * Source text, not a function: tsx would add its own helpers to a function's body, unknown in the page.
 * An init script is the browser's own, so the portal's CSP (no eval) does not apply to it.
 */
const BUTTON_WATCH = `
  const observer = new MutationObserver(() => {
    const links = Array.from(document.querySelectorAll('a'));
    if (links.some((link) => /^\\s*Sign in with /.test(link.textContent || ''))) {
      window.buttonVisibleAt = performance.now();
      observer.disconnect();
    }
  });
  observer.observe(document, { childList: true, subtree: true, characterData: true });
`;

/** Reads a number the page keeps (an expression evaluated by DevTools, which the CSP does not govern). */
async function readNumber(page: Page, expression: string): Promise<number> {
  const value: unknown = await page.evaluate(expression);
  return typeof value === 'number' ? value : Number.NaN;
}

async function loadOnce(browser: Browser, url: string): Promise<Load> {
  const context = await browser.newContext({ viewport: { width: 375, height: 740 }, isMobile: true, hasTouch: true });
  try {
    const page = await context.newPage();
    await page.addInitScript(BUTTON_WATCH);
    const cdp = await context.newCDPSession(page);
    await cdp.send('Network.enable');
    await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
    await cdp.send('Network.emulateNetworkConditions', FAST_3G);
    const byId = new Map<string, Transfer>();
    cdp.on('Network.responseReceived', ({ requestId, type, response }) => byId.set(requestId, { url: response.url, type, transferred: 0, decoded: 0 }));
    cdp.on('Network.dataReceived', ({ requestId, dataLength }) => {
      const transfer = byId.get(requestId);
      if (transfer) transfer.decoded += dataLength;
    });
    cdp.on('Network.loadingFinished', ({ requestId, encodedDataLength }) => {
      const transfer = byId.get(requestId);
      if (transfer) transfer.transferred = encodedDataLength;
    });
    await page.goto(url, { waitUntil: 'load', timeout: 60_000 });
    for (const deadline = Date.now() + 60_000; Number.isNaN(await readNumber(page, 'window.buttonVisibleAt')); ) {
      if (Date.now() > deadline) throw new Error(`no "Sign in with" button on ${url} after 60 s`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    // Whatever the page fetches after its button (lazy chunks, a second API call) counts too.
    await page.waitForLoadState('networkidle', { timeout: 60_000 });
    const firstContentfulPaintMs = await readNumber(page, "performance.getEntriesByName('first-contentful-paint')[0]?.startTime");
    return { transfers: [...byId.values()], firstContentfulPaintMs, buttonVisibleMs: await readNumber(page, 'window.buttonVisibleAt') };
  } finally {
    await context.close();
  }
}

const sum = (transfers: readonly Transfer[], pick: (transfer: Transfer) => number) => transfers.reduce((total, transfer) => total + pick(transfer), 0);

/** What a client that takes only gzip is sent for each of these files (the budget is in gzip bytes). */
async function gzipBytes(port: number, urls: readonly string[]): Promise<number> {
  let total = 0;
  for (const url of urls) total += await rawGet(port, new URL(url), { 'accept-encoding': 'gzip' });
  return total;
}

/** The body's length on the wire (not decoded). */
async function rawGet(port: number, target: URL, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const outgoing = request({ host: '127.0.0.1', port, path: `${target.pathname}${target.search}`, headers: { host: target.host, ...headers }, agent: false }, (response) => {
      let length = 0;
      response.on('data', (chunk: Buffer) => (length += chunk.length));
      response.on('end', () => resolve(length));
      response.on('error', reject);
    });
    outgoing.on('error', reject);
    outgoing.end();
  });
}

const kb = (bytes: number) => `${fixed(bytes / 1024, 1)} KB`;

async function main(): Promise<number> {
  const processes = new ProcessGroup();
  const workDir = await mkdtemp(path.join(tmpdir(), 'gatehouse-bench-web-'));
  let browser: Browser | undefined;
  try {
    // The app's upstream is never reached: only the sign-in page is loaded.
    const gatehouse = await startGatehouse(processes, { root, workDir, upstreamPort: await freePort() });
    const portal = await httpGet({ port: gatehouse.port, path: '/sign-in', headers: { host: new URL(gatehouse.portalOrigin).host } });
    if (portal.status !== 200) throw new Error(`/sign-in answered ${portal.status}`);
    // Signed out, coming from an app: the page a person sees most.
    const url = `${gatehouse.portalOrigin}/sign-in?rd=${encodeURIComponent(`${gatehouse.appOrigin}/`)}`;
    browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: CHROMIUM_ARGS });
    console.log(`bench:web: ${url}, ${LOADS} loads, each with a cold cache, on emulated Fast 3G (${FAST_3G.latency} ms latency, ${thousands(FAST_3G.downloadThroughput)} B/s down, ${thousands(FAST_3G.uploadThroughput)} B/s up), CPU not slowed`);
    // One load first to warm the server (its first answers read files), not counted.
    await loadOnce(browser, url);
    const loads: Load[] = [];
    for (let index = 0; index < LOADS; index += 1) loads.push(await loadOnce(browser, url));

    const first = loads[0]!;
    const scripts = first.transfers.filter((transfer) => transfer.type === 'Script');
    const styles = first.transfers.filter((transfer) => transfer.type === 'Stylesheet');
    const documents = first.transfers.filter((transfer) => transfer.type === 'Document');
    const jsGzip = await gzipBytes(gatehouse.port, scripts.map((transfer) => transfer.url));
    const cssGzip = await gzipBytes(gatehouse.port, styles.map((transfer) => transfer.url));
    const fcp = median(loads.map((load) => load.firstContentfulPaintMs));
    const button = median(loads.map((load) => load.buttonVisibleMs));
    const verdict = (ok: boolean) => (ok ? 'within budget' : 'OVER BUDGET');

    console.log('');
    console.log(
      table(
        ['what the sign-in page loads', 'files', 'transferred', 'decoded', 'sent to a gzip-only client'],
        [
          ['JavaScript', String(scripts.length), kb(sum(scripts, (t) => t.transferred)), kb(sum(scripts, (t) => t.decoded)), kb(jsGzip)],
          ['CSS', String(styles.length), kb(sum(styles, (t) => t.transferred)), kb(sum(styles, (t) => t.decoded)), kb(cssGzip)],
          ['HTML', String(documents.length), kb(sum(documents, (t) => t.transferred)), kb(sum(documents, (t) => t.decoded)), ''],
          ['everything', String(first.transfers.length), kb(sum(first.transfers, (t) => t.transferred)), kb(sum(first.transfers, (t) => t.decoded)), ''],
        ],
      ),
    );
    console.log('');
    console.log(
      table(
        ['on Fast 3G, cold cache', `median of ${LOADS}`, 'min', 'max', 'budget', ''],
        [
          ['first contentful paint', `${thousands(fcp)} ms`, `${thousands(Math.min(...loads.map((l) => l.firstContentfulPaintMs)))} ms`, `${thousands(Math.max(...loads.map((l) => l.firstContentfulPaintMs)))} ms`, `≤ ${thousands(BUDGET.firstRenderMs)} ms`, verdict(fcp <= BUDGET.firstRenderMs)],
          ['provider button visible', `${thousands(button)} ms`, `${thousands(Math.min(...loads.map((l) => l.buttonVisibleMs)))} ms`, `${thousands(Math.max(...loads.map((l) => l.buttonVisibleMs)))} ms`, '', ''],
        ],
      ),
    );
    console.log('');
    console.log(`JavaScript as gzip: ${kb(jsGzip)} (budget ≤ ${kb(BUDGET.jsGzipBytes)}): ${verdict(jsGzip <= BUDGET.jsGzipBytes)}`);
    console.log(`files: ${first.transfers.map((transfer) => `${new URL(transfer.url).pathname} (${transfer.type}, ${thousands(transfer.transferred)} B)`).join(', ')}`);
    return 0;
  } finally {
    await browser?.close();
    await processes.stopAll();
    await rm(workDir, { recursive: true, force: true });
  }
}

main()
  .catch((error: unknown) => {
    console.error(`\nbench:web failed: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  })
  .then((code) => process.exit(code));
