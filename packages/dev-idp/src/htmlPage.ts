import type { ServerResponse } from 'node:http';

const HTML_ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Escapes text for HTML element content and quoted attribute values. Every echoed value goes through it. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (character) => HTML_ESCAPES[character]!);
}

const STYLE = `
:root{color-scheme:light dark;--fg:#1d2430;--muted:#5b6472;--bg:#f3f5f8;--card:#fff;--line:#c9d0da;--accent:#2457c5;--accent-fg:#fff;--error-bg:#fdecec;--error-fg:#9b1c1c}
@media (prefers-color-scheme:dark){:root{--fg:#e6e9ee;--muted:#a3acb9;--bg:#14171c;--card:#1e232b;--line:#3a424f;--accent:#6d98f2;--accent-fg:#0c1322;--error-bg:#3b1717;--error-fg:#ffb4b4}}
*{box-sizing:border-box}
body{margin:0;min-height:100vh;display:grid;place-items:center;background:var(--bg);color:var(--fg);font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
main{width:min(100% - 2rem,24rem);margin:2rem 0;padding:2rem;background:var(--card);border:1px solid var(--line);border-radius:12px}
h1{margin:0 0 .25rem;font-size:1.5rem}
p{margin:.5rem 0 1rem;color:var(--muted)}
label{display:block;margin:1rem 0 .25rem;font-weight:600}
input{width:100%;padding:.6rem .7rem;font:inherit;color:inherit;background:transparent;border:1px solid var(--line);border-radius:8px}
input:focus-visible,button:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
button{width:100%;margin-top:1.25rem;padding:.65rem;font:inherit;font-weight:600;border-radius:8px;cursor:pointer;border:1px solid var(--accent);background:var(--accent);color:var(--accent-fg)}
button.secondary{margin-top:.5rem;background:transparent;color:var(--fg);border-color:var(--line)}
.error{padding:.6rem .8rem;border-radius:8px;background:var(--error-bg);color:var(--error-fg);font-weight:600}
details{margin-top:1.5rem;color:var(--muted);font-size:.9rem}
code{font-size:.9em}
`;

/**
 * A complete, self-contained HTML page: inline CSS, no external assets. `title` is escaped here;
 * `body` is trusted markup, so callers escape whatever they interpolate into it.
 */
export function htmlPage(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`;
}

/**
 * Security headers for every page the dev IdP renders. Inline styles are allowed, scripts only with
 * the given nonce. There is deliberately no `form-action`: Chrome applies it to the redirects that
 * follow a form post, and those end at the relying party's origin.
 */
export function pageSecurityHeaders(scriptNonce?: string): Record<string, string> {
  const scriptSource = scriptNonce === undefined ? "'none'" : `'nonce-${scriptNonce}'`;
  return {
    'Content-Security-Policy': `default-src 'none'; style-src 'unsafe-inline'; script-src ${scriptSource}; base-uri 'none'; frame-ancestors 'none'`,
    'Cache-Control': 'no-store',
    'Referrer-Policy': 'no-referrer',
    'X-Content-Type-Options': 'nosniff',
  };
}

/** Writes a complete HTML response with {@link pageSecurityHeaders}. */
export function sendHtml(res: ServerResponse, status: number, html: string): void {
  res.writeHead(status, {
    ...pageSecurityHeaders(),
    'Content-Type': 'text/html; charset=utf-8',
    'Content-Length': Buffer.byteLength(html),
  });
  res.end(html);
}
