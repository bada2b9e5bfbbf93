import { escapeHtml } from '../escapeHtml.js';
import { STYLE } from '../whoamiPage.js';
import type { RpSession } from './sessions.js';

function page(title: string, body: string): string {
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

/** A claim's value as text: strings as they are, anything else (groups, booleans, times) as JSON. */
function claimValue(value: unknown): string {
  return `<code>${escapeHtml(typeof value === 'string' ? value : JSON.stringify(value))}</code>`;
}

/** Claims as a table of name and value, one row each (never a string spread over a table). */
function claimsTable(claims: Record<string, unknown>): string {
  const rows = Object.entries(claims).map(([name, value]) => {
    // iat, exp, auth_time are Unix seconds: shown with their date, so a newcomer can read them.
    const when = ['iat', 'exp', 'auth_time'].includes(name) && typeof value === 'number' ? ` <span class="missing">(${new Date(value * 1000).toISOString()})</span>` : '';
    return `<tr><th scope="row">${escapeHtml(name)}</th><td>${claimValue(value)}${when}</td></tr>`;
  });
  return `<table>\n${rows.join('\n')}\n</table>`;
}

export interface HomeInput {
  /** Where the same app is reachable behind Gatehouse's guard, if known. */
  guardedUrl: string | undefined;
  signedInAs: string | undefined;
}

/** The demo's home page: the two ways an app can be protected by Gatehouse, side by side. */
export function homePage({ guardedUrl, signedInAs }: HomeInput): string {
  const guarded = guardedUrl
    ? `<p><a class="button" href="${escapeHtml(guardedUrl)}">Open ${escapeHtml(new URL(guardedUrl).host)}</a></p>`
    : '<p class="missing">No guarded address is configured for this demo.</p>';
  const oidc = signedInAs
    ? `<p>Signed in as <code>${escapeHtml(signedInAs)}</code>. <a href="/me">See who signed in</a>.</p>
<form method="post" action="/logout"><button type="submit">Sign out</button></form>`
    : '<form method="get" action="/login"><button type="submit">Sign in with Gatehouse</button></form>';
  return page(
    'Gatehouse demo app',
    `<h1>Gatehouse demo app</h1>
<section aria-labelledby="guarded">
<h2 id="guarded">Behind Gatehouse's guard</h2>
<p>Gatehouse stands in front of the app as its reverse proxy: only people its policy allows get through, and the app reads who they are from signed headers, without any sign-in code of its own.</p>
${guarded}
</section>
<section aria-labelledby="oidc">
<h2 id="oidc">Sign in with Gatehouse</h2>
<p>The app is reachable by itself and signs people in with OpenID Connect, Gatehouse being its OpenID Provider: the same sign-in, the same policy, and signing out of Gatehouse signs out here too.</p>
${oidc}
</section>`,
  );
}

/** Who signed in: the ID token's claims and what the userinfo endpoint said. */
export function mePage(session: RpSession): string {
  const userinfo = session.userinfo ? claimsTable(session.userinfo) : '<p class="missing">The userinfo endpoint was not asked or answered nothing.</p>';
  return page(
    'Signed in with Gatehouse',
    `<h1>Signed in with Gatehouse</h1>
<section aria-labelledby="who">
<h2 id="who">Who signed in</h2>
<p>The demo verified the ID token Gatehouse signed (its signature against Gatehouse's published keys, issuer, audience, nonce and expiry) and keeps only a random session cookie in your browser.</p>
<form method="post" action="/logout"><button type="submit">Sign out</button></form>
</section>
<section aria-labelledby="id-token">
<h2 id="id-token">ID token claims</h2>
${claimsTable(session.claims)}
</section>
<section aria-labelledby="userinfo">
<h2 id="userinfo">Userinfo</h2>
${userinfo}
</section>
<p><a href="/">Back to the demo's home page</a></p>`,
  );
}

export function signedOutPage(): string {
  return page(
    'Signed out',
    `<h1>Signed out</h1>
<section>
<p>You are signed out of the demo app and of Gatehouse, and of the identity provider you signed in with when it has a sign-out of its own.</p>
<p><a href="/">Back to the demo's home page</a></p>
</section>`,
  );
}

/** A sign-in that could not finish: what happened, in one sentence, and the way to start again. */
export function problemPage(title: string, explanation: string): string {
  return page(
    title,
    `<h1>${escapeHtml(title)}</h1>
<section>
<p>${escapeHtml(explanation)}</p>
<p><a href="/">Back to the demo's home page</a></p>
</section>`,
  );
}
