/** Escapes text for HTML element content and quoted attribute values. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

/**
 * The headers on every answer Gatehouse itself writes where a browser may show it — pages, errors and
 * redirects on app hosts (the 403 page, the handshake, the raw error writer), and error answers on the
 * portal (which otherwise has helmet's, app.ts). Threat: clickjacking — the 403 page framed by another
 * site and its "Sign out" clicked through a decoy — and MIME sniffing of an answer. The pages load
 * nothing and run no script; their only style is the inline <style>. No `form-action`: Chromium applies
 * it to the redirect after a form is sent, and signing out ends at the IdP. Not helmet: it writes its
 * headers onto the raw response when a request arrives, where a proxied app's answer would inherit them,
 * and the hot path writes answers without Fastify at all.
 */
export const PAGE_SECURITY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; frame-ancestors 'none'",
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
});

/** The portal header's mark (Tabler's shield-lock, as the front end draws it), inline: the pages load nothing. */
const SHIELD_MARK =
  '<svg xmlns="http://www.w3.org/2000/svg" width="24" height="24" viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round" stroke-linejoin="round" aria-hidden="true"><path d="M12 3a12 12 0 0 0 8.5 3a12 12 0 0 1 -8.5 15a12 12 0 0 1 -8.5 -15a12 12 0 0 0 8.5 -3"/><path d="M11 11a1 1 0 1 0 2 0a1 1 0 1 0 -2 0"/><path d="M12 12l0 2.5"/></svg>';

/**
 * A small self-contained page (no scripts) for the answers the server renders itself: every error
 * page, the 404 and the 403 on app hosts share it, in the portal's look (its header, one card, margins
 * on a phone, buttons that wrap).
 */
export function htmlPage({ title, body }: { title: string; body: string }): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)} · Gatehouse</title>
<style>
  :root { color-scheme: light dark; --fg: #1a1b1e; --muted: #495057; --bg: #f8f9fa; --card: #fff; --accent: #1c5fba; --on-accent: #fff; --border: #dee2e6; }
  @media (prefers-color-scheme: dark) { :root { --fg: #e9ecef; --muted: #adb5bd; --bg: #1a1b1e; --card: #25262b; --accent: #74a8f0; --on-accent: #1a1b1e; --border: #373a40; } }
  * { box-sizing: border-box; }
  body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); }
  header { display: flex; align-items: center; gap: 8px; height: 56px; padding: 0 24px; border-bottom: 1px solid var(--border); background: var(--card); font-weight: 700; font-size: 1.125rem; }
  header svg { color: var(--accent); flex: none; }
  main { width: min(560px, calc(100% - 32px)); margin: 48px auto; padding: 32px; background: var(--card); border: 1px solid var(--border); border-radius: 8px; overflow-wrap: anywhere; }
  @media (max-width: 480px) { header { padding: 0 16px; } main { margin-top: 24px; padding: 24px 20px; } }
  h1 { font-size: 1.5rem; line-height: 1.3; margin: 0 0 12px; }
  p { margin: 0 0 16px; }
  .ref { color: var(--muted); font-size: 0.875rem; margin: 8px 0 0; }
  code { font-family: ui-monospace, monospace; }
  .actions { display: flex; flex-wrap: wrap; gap: 12px; margin: 0 0 16px; }
  .actions p, .actions form { margin: 0; }
  form { margin: 0 0 16px; }
  a.button, button { display: inline-block; min-height: 40px; padding: 8px 16px; border-radius: 8px; background: var(--accent); color: var(--on-accent); text-decoration: none; border: 1px solid var(--accent); font: inherit; font-weight: 600; cursor: pointer; }
  a.button.secondary, button.secondary { background: transparent; color: var(--fg); border-color: var(--border); }
  a.button:focus-visible, button:focus-visible { outline: 2px solid var(--accent); outline-offset: 2px; }
</style>
</head>
<body>
<header>${SHIELD_MARK}<span>Gatehouse</span></header>
<main>
${body}
</main>
</body>
</html>
`;
}

export interface ErrorPageInput {
  title: string;
  message: string;
  code: string;
  reference: string;
  retryUrl?: string | undefined;
  retryLabel?: string | undefined;
  /** A second way on, beside the first ("Your account"). */
  secondary?: { url: string; label: string } | undefined;
}

export function errorPage({ title, message, code, reference, retryUrl, retryLabel, secondary }: ErrorPageInput): string {
  const links = [
    retryUrl ? `<a class="button" href="${escapeHtml(retryUrl)}">${escapeHtml(retryLabel ?? 'Start again')}</a>` : '',
    secondary ? `<a class="button secondary" href="${escapeHtml(secondary.url)}">${escapeHtml(secondary.label)}</a>` : '',
  ].filter(Boolean);
  const action = links.length > 0 ? `<div class="actions">${links.join('')}</div>` : '';
  return htmlPage({
    title,
    body: `<h1>${escapeHtml(title)}</h1>
<p>${escapeHtml(message)}</p>
${action}
<p class="ref">Error <code>${escapeHtml(code)}</code> · Reference <code>${escapeHtml(reference)}</code></p>`,
  });
}

export interface DeniedPageInput {
  email: string;
  appName: string;
  reference: string;
  /** The app host's "Switch account" endpoint (a form post) and the URL to come back to after it. */
  switchAccountAction: string;
  returnTo: string;
  /** The portal's app launcher ("Back to your apps"). */
  appsUrl: string;
  /** Whom to ask for access (organization.contact); "an administrator" without one. */
  contact?: string | undefined;
  /** The app host's sign-out endpoint and the CSRF token for its form. */
  signOutAction: string;
  csrfToken: string;
}

/** 403 on an app host: who is signed in, which app said no, whom to ask, and the ways forward. */
export function deniedPage({ email, appName, reference, switchAccountAction, returnTo, appsUrl, contact, signOutAction, csrfToken }: DeniedPageInput): string {
  return htmlPage({
    title: 'Access denied',
    body: `<h1>Access denied</h1>
<p>You are signed in as <strong>${escapeHtml(email)}</strong>, who may not open <strong>${escapeHtml(appName)}</strong>.</p>
<p>If you should have access, ask ${contact ? escapeHtml(contact) : 'an administrator'}. Or sign in with another account.</p>
<div class="actions">
<form method="post" action="${escapeHtml(switchAccountAction)}">
<input type="hidden" name="csrf_token" value="${escapeHtml(csrfToken)}">
<input type="hidden" name="rd" value="${escapeHtml(returnTo)}">
<button type="submit">Switch account</button>
</form>
<a class="button secondary" href="${escapeHtml(appsUrl)}">Back to your apps</a>
<form method="post" action="${escapeHtml(signOutAction)}">
<input type="hidden" name="csrf_token" value="${escapeHtml(csrfToken)}">
<button type="submit" class="secondary">Sign out</button>
</form>
</div>
<p class="ref">Error <code>access_denied</code> · Reference <code>${escapeHtml(reference)}</code></p>`,
  });
}
