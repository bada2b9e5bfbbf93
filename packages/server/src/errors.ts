import { randomBytes } from 'node:crypto';
import type { SignInRefusalReason } from '@gatehouse/contract';

/**
 * The error catalogue (PRODUCT.md): every failure a person or a client can see has a stable code, an
 * HTTP status, a title and a sentence written for people. Third-party failures are caught at the
 * boundary and rethrown as an AppError with the original as `cause`; the cause is logged, never shown.
 */
export const catalogue = {
  provider_unavailable: {
    status: 502,
    title: 'Sign-in provider unavailable',
    message: ({ provider }: Params) => `We couldn't reach ${provider ?? 'the sign-in provider'}. Try again in a minute.`,
  },
  provider_misconfigured: {
    status: 502,
    title: 'Sign-in provider misconfigured',
    message: ({ provider }: Params) =>
      `${provider ?? 'The sign-in provider'} is not set up correctly for this site, so signing in with it does not work right now. Tell your administrator, quoting the reference below.`,
  },
  sign_in_expired: {
    status: 400,
    title: 'Sign-in expired',
    message: () => 'This sign-in took too long or was already used. Start again.',
  },
  sign_in_denied: {
    status: 403,
    title: 'Sign-in was not completed',
    message: ({ provider, reason }: Params) =>
      `${provider ?? 'The sign-in provider'} did not sign you in: ${sentenceEnd(reason ?? 'no reason was given')}`,
  },
  provider_disabled: {
    status: 403,
    title: 'Sign-in provider turned off',
    message: ({ provider }: Params) => `Signing in with ${provider ?? 'this provider'} is turned off. Choose another way to sign in.`,
  },
  sign_in_not_allowed: {
    status: 403,
    title: 'Sign-in not allowed',
    message: (params: Params) => notAllowedSentence(params),
  },
  invalid_response: {
    status: 502,
    title: 'Sign-in could not be verified',
    message: ({ provider }: Params) => `The answer from ${provider ?? 'the sign-in provider'} could not be verified.`,
  },
  identity_conflict: {
    status: 409,
    title: 'Account already exists',
    message: ({ refusal, provider }: Params) =>
      refusal === 'identity_taken'
        ? `This ${provider ?? 'provider'} account is already linked to another Gatehouse user. Sign out and sign in with it to use that account.`
        : refusal === 'email_of_another_user'
          ? `Your account at ${provider ?? 'your sign-in provider'} now has the email address of another person here, so Gatehouse cannot sign you in with it. Contact your administrator.`
          : 'Sign in with your usual provider, then link this one from your account.',
  },
  last_identity: {
    status: 409,
    title: 'Cannot unlink',
    message: () => 'This is the only way you can sign in, so it cannot be unlinked. Link another provider first.',
  },
  account_suspended: {
    status: 403,
    title: 'Account suspended',
    message: () => 'Your account is suspended. Contact your administrator.',
  },
  access_denied: {
    status: 403,
    title: 'Access denied',
    message: ({ email, app }: Params) => `You are signed in as ${email ?? 'this user'}, who may not open ${app ?? 'this app'}.`,
  },
  upstream_unavailable: {
    status: 502,
    title: 'App not answering',
    message: ({ app }: Params) => `${app ?? 'The app'} is not answering right now. Try again in a minute.`,
  },
  no_upstream: {
    status: 421,
    title: 'App not served here',
    message: ({ app }: Params) =>
      `${app ?? 'This app'} is served by its own web server, which asks Gatehouse who may open it; Gatehouse does not serve it itself. Open it at the address your administrator gave you, or tell them, quoting the reference below.`,
  },
  unauthenticated: {
    status: 401,
    title: 'Not signed in',
    message: () => 'You are not signed in.',
  },
  session_ended: {
    status: 401,
    title: 'Session ended',
    message: ({ reason }: Params) => `Your session ended: ${reason ?? 'it no longer meets the rules of who may sign in here'}. Sign in again.`,
  },
  forbidden: {
    status: 403,
    title: 'Not allowed',
    message: () => 'You do not have access to this. It needs an administrator.',
  },
  admin_from_config: {
    status: 409,
    title: 'Set in the configuration',
    message: () => 'This person is an administrator by the configuration file; change it there.',
  },
  app_from_config: {
    status: 409,
    title: 'Set in the configuration',
    message: () => 'This app is defined in the configuration file; change it there.',
  },
  provider_from_config: {
    status: 409,
    title: 'Set in the configuration',
    message: () => 'This provider is defined in the configuration file; change it there.',
  },
  provider_in_use: {
    status: 409,
    title: 'Provider in use',
    message: ({ provider }: Params) =>
      `People have signed in with ${provider ?? 'this provider'}, so it cannot be deleted or moved to another issuer. Turn it off instead.`,
  },
  client_secret_limit: {
    status: 409,
    title: 'Two secrets already',
    message: () => 'This app has two client secrets already: revoke one before creating another (two at a time lets an app move to a new secret without a gap).',
  },
  issuer_unreachable: {
    status: 502,
    title: 'Issuer not reachable',
    message: ({ issuer, reason }: Params) => `We couldn't reach ${issuer ?? 'the issuer'}${reason ? `: ${reason}` : ''}. Check the URL and try again.`,
  },
  issuer_invalid: {
    status: 400,
    title: 'Not an OpenID Connect issuer',
    message: ({ issuer, reason }: Params) => `${issuer ?? 'This URL'} is not a usable OpenID Connect issuer: ${reason ?? 'its discovery document could not be read'}.`,
  },
  pkce_unsupported: {
    status: 400,
    title: 'PKCE not supported',
    message: ({ issuer }: Params) => `${issuer ?? 'This issuer'} does not support PKCE with S256, which Gatehouse requires for every sign-in.`,
  },
  self_lockout: {
    status: 409,
    title: 'You would be locked out',
    message: ({ reason }: Params) => `This change would lock you out${reason ? `: ${reason}` : ''}.`,
  },
  conflict: {
    status: 409,
    title: 'Already in use',
    message: ({ reason }: Params) => `${sentenceEnd(reason ?? 'This is already in use')} Choose another.`,
  },
  last_admin: {
    status: 409,
    title: 'Last administrator',
    message: () => 'There must be at least one administrator left.',
  },
  config_invalid: {
    status: 422,
    title: 'Configuration not applied',
    message: ({ reason }: Params) =>
      `The configuration file was not applied, and the configuration in force is unchanged: ${reason ?? 'it is invalid'}.`,
  },
  csrf_failed: {
    status: 403,
    title: 'Request not verified',
    message: () => 'This request could not be verified. Reload the page.',
  },
  rate_limited: {
    status: 429,
    title: 'Too many attempts',
    message: () => 'Too many attempts. Wait a moment and try again.',
  },
  bad_request: {
    status: 400,
    title: 'Bad request',
    message: ({ reason }: Params) => `The request could not be understood${reason ? `: ${reason}` : ''}.`,
  },
  request_too_large: {
    status: 431,
    title: 'Request too large',
    message: () => "The request's headers are too large. In a browser, clearing this site's cookies usually fixes it.",
  },
  request_timeout: {
    status: 408,
    title: 'Request timed out',
    message: () => 'The request took too long to arrive. Try again.',
  },
  unknown_host: {
    status: 421,
    title: 'Not an address of this site',
    message: ({ portal }: Params) => `Gatehouse does not answer at this address${portal ? `. Open ${portal} instead` : ''}.`,
  },
  oidc_request_invalid: {
    status: 400,
    title: 'This sign-in request cannot be answered',
    message: ({ app, reason }: Params) =>
      `${app ?? 'The app that sent you here'} asked Gatehouse for something it cannot do${reason ? `: ${sentenceEnd(reason)}` : '.'} Go back to the app and try again; if it keeps happening, tell your administrator, quoting the reference below.`,
  },
  oidc_consent_closed: {
    status: 409,
    title: 'Already answered or expired',
    message: () => 'This app’s request is not waiting for an answer: it was answered already or has expired, so nothing was changed. Go back to the app and sign in again.',
  },
  oidc_access_denied: {
    status: 403,
    title: 'Access denied',
    message: ({ app, email }: Params) =>
      `You are signed in as ${email ?? 'someone'}, who may not sign in to ${app ?? 'this app'}. If you should have access, ask an administrator.`,
  },
  not_found: {
    status: 404,
    title: 'Page not found',
    message: () => 'There is nothing at this address.',
  },
  method_not_allowed: {
    status: 405,
    title: 'Method not allowed',
    message: () => 'This address does not accept that kind of request.',
  },
  store_unavailable: {
    status: 503,
    title: 'Gatehouse is unavailable',
    message: () => 'Gatehouse cannot reach its database right now, so it cannot check who you are. Try again in a moment.',
  },
  internal: {
    status: 500,
    title: 'Something went wrong',
    message: () => 'Something went wrong on our side. Try again, and quote the reference if it keeps happening.',
  },
} satisfies Record<string, CatalogueEntry>;

export type ErrorCode = keyof typeof catalogue;
type Params = Partial<Record<'provider' | 'reason' | 'email' | 'app' | 'issuer' | 'domain' | 'portal', string>> & {
  /** For a refused sign-in: which rule said no, so the sentence names the real reason. */
  refusal?: SignInRefusalReason | undefined;
};

/**
 * What a person reads when a rule refuses them (`sign_in_not_allowed`): the real reason, in their
 * words — a malformed email is not an unverified one, and a domain rule names the domain.
 */
function notAllowedSentence({ refusal, provider, email, domain }: Params): string {
  const at = provider ?? 'your sign-in provider';
  const ask = 'Contact your administrator if you think it should.';
  switch (refusal) {
    case 'email_missing':
      return `Your account at ${at} did not share an email address, and Gatehouse needs one to sign you in. Contact your administrator.`;
    case 'email_malformed':
      return `The email address your account at ${at} sent is not one Gatehouse can use. Contact your administrator.`;
    case 'email_unverified':
      return `Your account at ${at} has no verified email${email ? ` (${email} is not verified there)` : ''}. Verify it at ${at}, then sign in again.`;
    case 'domain_not_allowed_by_provider':
      return domain ? `${domain} is not allowed for signing in with ${at}. ${ask}` : `This account's email domain is not allowed for signing in with ${at}. ${ask}`;
    case 'domain_not_allowed_by_organization':
      return domain ? `${domain} is not allowed here. ${ask}` : `This account's email domain is not allowed here. ${ask}`;
    case 'users_not_created_by_provider':
    case 'users_not_created_by_organization':
      return `${email ?? 'This account'} has no account here yet, and new accounts are not created on first sign-in. Ask your administrator to add you.`;
    case 'hosted_domain_not_allowed':
      return `Your account at ${at} is not in ${domain ? `the ${domain} organisation` : 'an organisation'} allowed here. ${ask}`;
    case 'tenant_not_allowed':
      return `Your account at ${at} belongs to an organisation that is not allowed here. ${ask}`;
    case 'organization_not_allowed':
      return `Your account at ${at} is not a member of an organisation allowed here. ${ask}`;
    case 'claim_not_allowed':
      return `Your account at ${at} does not meet this site's sign-in requirements. ${ask}`;
    default:
      return `${email ?? 'This account'} may not sign in here. ${ask}`;
  }
}
interface CatalogueEntry {
  status: number;
  title: string;
  message: (params: Params) => string;
}

/** A refused sign-in's reason (machine-readable) and the sentence for admins: logged and audited, never shown to the person. */
export interface Refusal {
  reason: SignInRefusalReason;
  why: string;
  /** The Gatehouse user refused, when there is one (a suspended account): their audit trail shows it. */
  userId?: string | undefined;
}

export interface AppErrorOptions {
  params?: Params;
  /** Why a sign-in was refused; picks the sentence too (see signInRefused). */
  refusal?: Refusal;
  /**
   * What an admin must change when the failure is a configuration error (`provider_misconfigured`):
   * logged and shown in the console's test sign-in, never to the person.
   */
  fix?: string;
  cause?: unknown;
  /** Extra response headers (Retry-After, Allow, ...). */
  headers?: Record<string, string>;
  /**
   * The field of the request the failure is about (`conflict`: `id`, `publicUrl`): sent as the problem's
   * `field` member, so a form shows the sentence beside that field.
   */
  field?: string;
  /** Where a person can start over (defaults per code). */
  retryUrl?: string;
  /** The words of that link (default: "Start again"). */
  retryLabel?: string;
  /**
   * An answer given many times a minute in the normal course of things (the portal asking whether
   * anyone is signed in): logged at debug, not info. Only for refusals (4xx); a failure keeps its level.
   */
  expected?: boolean;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly title: string;
  readonly headers: Record<string, string>;
  readonly retryUrl: string | undefined;
  readonly retryLabel: string | undefined;
  readonly refusal: Refusal | undefined;
  readonly fix: string | undefined;
  readonly field: string | undefined;
  readonly expected: boolean;

  constructor(code: ErrorCode, options: AppErrorOptions = {}) {
    const entry: CatalogueEntry = catalogue[code];
    super(entry.message({ ...options.params, ...(options.refusal ? { refusal: options.refusal.reason } : {}) }), { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.status = entry.status;
    this.title = entry.title;
    this.headers = options.headers ?? {};
    this.retryUrl = options.retryUrl;
    this.retryLabel = options.retryLabel;
    this.refusal = options.refusal;
    this.fix = options.fix;
    this.field = options.field;
    this.expected = options.expected === true && entry.status < 500;
  }
}

/** The catalogue code each refusal reason is answered with. */
export const refusalCodes = {
  email_missing: 'sign_in_not_allowed',
  email_malformed: 'sign_in_not_allowed',
  email_unverified: 'sign_in_not_allowed',
  domain_not_allowed_by_provider: 'sign_in_not_allowed',
  domain_not_allowed_by_organization: 'sign_in_not_allowed',
  users_not_created_by_provider: 'sign_in_not_allowed',
  users_not_created_by_organization: 'sign_in_not_allowed',
  account_suspended: 'account_suspended',
  email_taken: 'identity_conflict',
  email_ambiguous: 'identity_conflict',
  email_of_another_user: 'identity_conflict',
  identity_taken: 'identity_conflict',
  hosted_domain_not_allowed: 'sign_in_not_allowed',
  tenant_not_allowed: 'sign_in_not_allowed',
  organization_not_allowed: 'sign_in_not_allowed',
  claim_not_allowed: 'sign_in_not_allowed',
} as const satisfies Record<SignInRefusalReason, ErrorCode>;

export type RefusalCode = (typeof refusalCodes)[SignInRefusalReason];

/**
 * A refused sign-in as its catalogue error: the sign-in rules and a provider's own claim checks (a
 * hosted domain, a tenant) both throw this, so the callback audits and logs every refusal alike.
 * `params` feed the person's sentence (provider name, domain, email); `why` is for admins only.
 */
export function signInRefused(reason: SignInRefusalReason, why: string, params: Pick<Params, 'provider' | 'email' | 'domain'> = {}, userId?: string): AppError {
  return new AppError(refusalCodes[reason], { params, refusal: { reason, why, ...(userId ? { userId } : {}) } });
}

/** A short, unguessable reference a person can quote and an operator can grep for in the log. */
export function newReference(): string {
  return randomBytes(6).toString('hex');
}

/**
 * Whether a failure means the database cannot be used right now — not that a query was wrong. Such a
 * request is answered 503 `store_unavailable` (never an allow: nothing was decided), and the next one
 * works again once the database does. Recognised from the driver's own codes, along the cause chain:
 * - SQLite (better-sqlite3): busy or locked past the busy timeout, I/O errors, a file it cannot open, a
 *   full disk;
 * - PostgreSQL (pg): SQLSTATE class 08 (connection exception), 53 (insufficient resources: too many
 *   connections, out of memory or disk), 57P01–57P05 (the server shutting down or not yet accepting
 *   connections), 57014 (the statement timeout); the socket failing or the pool timing out.
 */
export function isStoreUnavailable(error: unknown): boolean {
  for (let current = error, depth = 0; current && typeof current === 'object' && depth < 5; current = (current as { cause?: unknown }).cause, depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') {
      if (/^SQLITE_(BUSY|LOCKED|IOERR|CANTOPEN|FULL)/.test(code)) return true;
      if (/^(08[0-9A-Z]{3}|53[0-9A-Z]{3}|57P0[1-5]|57014)$/.test(code)) return true;
      if (NETWORK_CODES.has(code)) return true;
    }
    const message = (current as { message?: unknown }).message;
    if (typeof message === 'string' && PG_CONNECTION_MESSAGES.some((text) => message.includes(text))) return true;
  }
  return false;
}

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
/** What pg and pg-pool say when the connection, not the query, failed (they set no code). */
const PG_CONNECTION_MESSAGES = ['Connection terminated', 'timeout exceeded when trying to connect', 'Client has encountered a connection error'];

/** Maps anything thrown to what may be shown: our errors as they are, Fastify's by status, the rest internal. */
export function toAppError(error: unknown): AppError {
  if (error instanceof AppError) return error;
  if (isStoreUnavailable(error)) return new AppError('store_unavailable', { cause: error, headers: { 'retry-after': '5' } });
  const status = typeof (error as { statusCode?: unknown })?.statusCode === 'number' ? (error as { statusCode: number }).statusCode : 500;
  const fastifyCode = (error as { code?: unknown })?.code;
  if (fastifyCode === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' || fastifyCode === 'FST_ERR_CTP_BODY_TOO_LARGE') {
    return new AppError('bad_request', { cause: error, params: { reason: 'unsupported or oversized body' } });
  }
  if (status === 404) return new AppError('not_found', { cause: error });
  if (status === 405) return new AppError('method_not_allowed', { cause: error });
  if (status === 429) return new AppError('rate_limited', { cause: error });
  if (status >= 400 && status < 500) return new AppError('bad_request', { cause: error, ...validationReason(error) });
  return new AppError('internal', { cause: error });
}

/**
 * What a contract schema refused in a request, field by field ("allowedDomains[0]: must be a domain such
 * as example.com"), in the words a providers: entry in gatehouse.yaml gets for the same mistake.
 */
function validationReason(error: unknown): { params: { reason: string } } | Record<string, never> {
  const validation = (error as { validation?: unknown })?.validation;
  if (!Array.isArray(validation) || validation.length === 0) return {};
  const problems = validation.flatMap((item: { instancePath?: unknown; message?: unknown }) =>
    typeof item?.message === 'string' && typeof item.instancePath === 'string' ? [`${fieldPath(item.instancePath)}: ${item.message}`] : [],
  );
  return problems.length > 0 ? { params: { reason: problems.join('; ') } } : {};
}

/** The validator's path ("/allowedDomains/0") as formatIssues writes one ("allowedDomains[0]"). */
function fieldPath(pointer: string): string {
  const segments = pointer.split('/').filter(Boolean);
  const path = segments.reduce((out, segment) => (/^\d+$/.test(segment) ? `${out}[${segment}]` : out ? `${out}.${segment}` : segment), '');
  return path || '(root)';
}

/**
 * A clause ended with one full stop: an IdP's own description often ends with one already ("The user
 * cancelled the sign-in."), and "sign-in.." reads as a typo.
 */
function sentenceEnd(clause: string): string {
  const trimmed = clause.trimEnd();
  return /[.!?]$/.test(trimmed) ? trimmed : `${trimmed}.`;
}
