import { escapeHtml } from './escapeHtml.js';
import { IDENTITY_HEADERS, type AssertionReport, type WhoamiReport } from './whoami.js';

export const STYLE = `
:root{color-scheme:light dark;--fg:#1d2430;--muted:#5b6472;--bg:#f3f5f8;--card:#fff;--line:#d5dbe3;--mark:#fff4cc;--ok:#1e6b34;--bad:#9b1c1c}
@media (prefers-color-scheme:dark){:root{--fg:#e6e9ee;--muted:#a3acb9;--bg:#14171c;--card:#1e232b;--line:#3a424f;--mark:#3d3414;--ok:#8fd6a3;--bad:#ffb4b4}}
body{margin:0;padding:2rem 1rem;background:var(--bg);color:var(--fg);font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
main{max-width:60rem;margin:0 auto}
section{margin:1rem 0;padding:1rem 1.25rem;background:var(--card);border:1px solid var(--line);border-radius:10px}
h1{margin:0 0 1rem}h2{margin:0 0 .75rem;font-size:1.1rem}
a.button,button{display:inline-block;padding:.5rem 1rem;border:0;border-radius:6px;background:#2456c7;color:#fff;font:inherit;font-weight:600;text-decoration:none;cursor:pointer}
form{margin:0}
section>:first-child{margin-top:0}section>:last-child{margin-bottom:0}
table{width:100%;border-collapse:collapse;table-layout:fixed}
th,td{padding:.4rem .5rem;border-bottom:1px solid var(--line);text-align:left;vertical-align:top;overflow-wrap:anywhere}
th{width:16rem;font-weight:600}
tr.identity{background:var(--mark)}
.missing{color:var(--muted);font-style:italic}
.ok{color:var(--ok);font-weight:600}.bad{color:var(--bad);font-weight:600}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.9em}
pre{margin:.5rem 0 0;white-space:pre-wrap;overflow-wrap:anywhere}
@media (max-width:40rem){body{padding:1rem .75rem}section{padding:.75rem}th,td{display:block;width:auto}th{padding-bottom:0;border-bottom:0}}
`;

function value(raw: string | string[] | undefined): string {
  if (raw === undefined) return '<span class="missing">not present</span>';
  return `<code>${escapeHtml(Array.isArray(raw) ? raw.join(', ') : raw)}</code>`;
}

function row(name: string, raw: string | string[] | undefined, identity = false): string {
  return `<tr${identity ? ' class="identity"' : ''}><th scope="row">${escapeHtml(name)}</th><td>${value(raw)}</td></tr>`;
}

function assertionSection(assertion: AssertionReport): string {
  switch (assertion.status) {
    case 'verified':
      return `<p class="ok">Assertion verified</p>\n<pre>${escapeHtml(JSON.stringify(assertion.claims, null, 2))}</pre>`;
    case 'invalid':
      return `<p class="bad">Assertion not verified</p>\n<p>${escapeHtml(assertion.reason)}</p>`;
    case 'absent':
      return '<p class="bad">No assertion: this request did not come through Gatehouse.</p>';
    case 'not_configured':
      return '<p class="missing">Verification is off: set DEMO_APP_JWKS_URL and DEMO_APP_ISSUER.</p>';
  }
}

/**
 * The whoami page: method, URL, the assertion check, and every header, Gatehouse's first. On a phone
 * each header's name sits over its value (beside a 16rem name, a value had a few pixels and took a
 * line per character).
 */
export function whoamiPage(report: WhoamiReport): string {
  // Node lower-cases request header names.
  const identityNames = new Set(IDENTITY_HEADERS.map((name) => name.toLowerCase()));
  const identityRows = IDENTITY_HEADERS.map((name) => row(name, report.headers[name.toLowerCase()], true));
  const otherRows = Object.entries(report.headers)
    .filter(([name]) => !identityNames.has(name))
    .map(([name, raw]) => row(name, raw));
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>whoami</title>
<style>${STYLE}</style>
</head>
<body>
<main>
<h1>whoami</h1>
<section aria-labelledby="request">
<h2 id="request">Request</h2>
<table>
${row('Method', report.method)}
${row('URL', report.url)}
</table>
</section>
<section aria-labelledby="assertion">
<h2 id="assertion">Assertion</h2>
${assertionSection(report.assertion)}
</section>
<section aria-labelledby="headers">
<h2 id="headers">Headers</h2>
<table>
${[...identityRows, ...otherRows].join('\n')}
</table>
</section>
</main>
</body>
</html>
`;
}
