import type { DevIdpUser } from './defaultUsers.js';
import { escapeHtml, htmlPage } from './htmlPage.js';

export interface LoginPageInput {
  idpName: string;
  /** Interaction id; the form posts back under `/interaction/<uid>/`, where the interaction cookie is scoped. */
  uid: string;
  /** Shown as "Sign in to continue to …". */
  clientName: string;
  /** Pre-filled email: the relying party's `login_hint`, or what was typed before a failed attempt. */
  login?: string;
  failed?: boolean;
  /** Accounts listed for newcomers; only ever the built-in default users. */
  accountHint?: readonly DevIdpUser[];
}

/** The dev IdP's sign-in form: labelled fields `login` and `password`, "Sign in", and "Cancel". */
export function loginPage(input: LoginPageInput): string {
  const base = `/interaction/${encodeURIComponent(input.uid)}`;
  const error = input.failed
    ? '<p class="error" role="alert" id="login-error">Invalid email or password.</p>'
    : '';
  const describedBy = input.failed ? ' aria-invalid="true" aria-describedby="login-error"' : '';
  // Focus whichever field the person needs next.
  const focusLogin = input.login ? '' : ' autofocus';
  const focusPassword = input.login ? ' autofocus' : '';
  const hint = input.accountHint?.length
    ? `<details>
<summary>Development accounts</summary>
<ul>
${input.accountHint.map((user) => `<li><code>${escapeHtml(user.login)}</code> / <code>${escapeHtml(user.password)}</code></li>`).join('\n')}
</ul>
</details>`
    : '';
  return htmlPage(
    `Sign in · ${input.idpName}`,
    `<h1>${escapeHtml(input.idpName)}</h1>
<p>Sign in to continue to <strong>${escapeHtml(input.clientName)}</strong>.</p>
${error}
<form method="post" action="${escapeHtml(`${base}/login`)}">
<label for="login">Email</label>
<input id="login" name="login" type="email" autocomplete="username" required value="${escapeHtml(input.login ?? '')}"${describedBy}${focusLogin}>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required${describedBy}${focusPassword}>
<button type="submit">Sign in</button>
</form>
<form method="post" action="${escapeHtml(`${base}/abort`)}">
<button type="submit" class="secondary">Cancel</button>
</form>
${hint}`,
  );
}
