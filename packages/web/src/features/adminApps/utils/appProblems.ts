import { appSchema, formatIssues } from '@gatehouse/contract';
import type { AppDefinition } from '../api/getAdminApps';
import { RULE_KIND_LABELS, isRuleKind } from './policyForm';

/** The app form's text fields, as the server names them. */
export const APP_FIELDS = ['id', 'name', 'publicUrl', 'upstream', 'publicPaths'] as const;
export type AppField = (typeof APP_FIELDS)[number];

const FIELD_NAMES: Record<AppField, string> = {
  id: 'an id',
  name: 'a name',
  publicUrl: 'the public URL',
  upstream: 'the upstream URL',
  publicPaths: 'the public paths',
};

/** The OpenID Connect fields of the app form, as the server names them under `oidc.`. */
export const OIDC_FIELDS = [
  'clientId',
  'authentication',
  'redirectUris',
  'postLogoutRedirectUris',
  'backchannelLogoutUri',
  'jwksUri',
  'jwks',
  'scopes',
  'accessTokenLifetime',
  'idTokenLifetime',
  'refreshTokenLifetime',
] as const;
export type OidcField = (typeof OIDC_FIELDS)[number];

const OIDC_FIELD_NAMES: Record<OidcField, string> = {
  clientId: 'a client id',
  authentication: 'how the app authenticates',
  redirectUris: 'at least one redirect URI',
  postLogoutRedirectUris: 'the post-logout redirect URIs',
  backchannelLogoutUri: 'the back-channel logout URI',
  jwksUri: 'the JWKS URL',
  jwks: 'the JWKS',
  scopes: 'the scopes',
  accessTokenLifetime: 'a duration',
  idTokenLifetime: 'a duration',
  refreshTokenLifetime: 'a duration',
};

/** Lists typed one per line: a problem of one entry is said with its line. */
const OIDC_LINE_FIELDS: ReadonlySet<OidcField> = new Set(['redirectUris', 'postLogoutRedirectUris']);

/** What is wrong with an app form, placed where a person fixes it. */
export interface AppFormErrors {
  /** One sentence per text field. */
  fields: Partial<Record<AppField, string>>;
  /** One sentence per OpenID Connect field. */
  oidc: Partial<Record<OidcField, string>>;
  /** About how the app is protected (neither a guarded host nor OpenID Connect). */
  protection?: string;
  /** About a whole list ("Add at least one allow rule"). */
  lists: { allow?: string; deny?: string };
  /** Per rule, by its place in its list (0-based, shown as "rule 1"). */
  rules: { allow: Record<number, string>; deny: Record<number, string> };
  /** Anything that belongs to no field (shown above the form). */
  other: string[];
}

export const noAppFormErrors = (): AppFormErrors => ({ fields: {}, oidc: {}, lists: {}, rules: { allow: {}, deny: {} }, other: [] });

export function hasAppFormErrors(errors: AppFormErrors): boolean {
  return (
    Object.keys(errors.fields).length > 0 ||
    Object.keys(errors.oidc).length > 0 ||
    errors.protection !== undefined ||
    Boolean(errors.lists.allow ?? errors.lists.deny) ||
    Object.keys(errors.rules.allow).length > 0 ||
    Object.keys(errors.rules.deny).length > 0 ||
    errors.other.length > 0
  );
}

/** "must be an absolute http(s) URL" → "Must be an absolute http(s) URL." */
function sentence(text: string): string {
  const trimmed = text.trim().replace(/\.$/, '');
  return `${trimmed.charAt(0).toUpperCase()}${trimmed.slice(1)}.`;
}

/** zod's own words for a value that is missing or empty, which a form says as "Enter …". */
const isEmptyMessage = (message: string) => /^(Too small|Invalid input: expected string, received undefined|Required)/i.test(message);

/** "policy.allow[0].groups[1]" → its segments: ["policy", "allow", 0, "groups", 1]. */
function segments(path: string): (string | number)[] {
  return [...path.matchAll(/([^.[\]]+)|\[(\d+)\]/g)].map((match) => (match[2] !== undefined ? Number(match[2]) : (match[1] ?? '')));
}

function fieldError(field: AppField, rest: (string | number)[], message: string): string {
  if (field === 'publicPaths' && typeof rest[0] === 'number') return `Line ${rest[0] + 1}: ${message}.`.replace(/\.\.$/, '.');
  if (isEmptyMessage(message)) return `Enter ${FIELD_NAMES[field]}.`;
  if (/^Too big/i.test(message)) return 'This is too long.';
  if (field === 'id' && /^duplicate app id/i.test(message)) return 'Another app already has this id. Choose another.';
  return sentence(message);
}

function oidcFieldError(field: OidcField, rest: (string | number)[], message: string): string {
  if (OIDC_LINE_FIELDS.has(field) && typeof rest[0] === 'number') return `Line ${rest[0] + 1}: ${message}.`.replace(/\.\.$/, '.');
  if (isEmptyMessage(message) || /at least one redirect URI/.test(message)) return `Enter ${OIDC_FIELD_NAMES[field]}.`;
  if (/^Too big/i.test(message)) return 'This is too long.';
  return sentence(message);
}

function ruleError(rest: (string | number)[], message: string): string {
  const [kind, index] = rest;
  const what = typeof kind === 'string' && isRuleKind(kind) ? RULE_KIND_LABELS[kind] : undefined;
  const at = typeof index === 'number' ? ` (value ${index + 1})` : '';
  if (what && isEmptyMessage(message)) return `${what}${at}: enter a value.`;
  return what ? `${what}${at}: ${message.replace(/\.$/, '')}.` : sentence(message);
}

/**
 * The problems of an app definition as "path: message" lines (the server's 400 detail, or the same
 * check run here first), sorted to the field, list or rule they are about and put in words.
 */
export function appFormErrors(problems: readonly string[]): AppFormErrors {
  const errors = noAppFormErrors();
  for (const problem of problems) {
    const split = /^([A-Za-z0-9_.[\]()]+): (.*)$/s.exec(problem);
    if (!split?.[1] || split[2] === undefined) {
      errors.other.push(problem);
      continue;
    }
    const [head, ...rest] = segments(split[1]);
    const message = split[2];
    if (typeof head === 'string' && (APP_FIELDS as readonly string[]).includes(head)) {
      const field = head as AppField;
      errors.fields[field] ??= fieldError(field, rest, message);
    } else if (head === 'oidc' && typeof rest[0] === 'string' && (OIDC_FIELDS as readonly string[]).includes(rest[0])) {
      const field = rest[0] as OidcField;
      errors.oidc[field] ??= oidcFieldError(field, rest.slice(1), message);
    } else if (head === 'guard') {
      errors.protection ??= sentence(message);
    } else if (head === 'policy' && (rest[0] === 'allow' || rest[0] === 'deny')) {
      const list = rest[0];
      const index = rest[1];
      if (typeof index === 'number') errors.rules[list][index] ??= ruleError(rest.slice(2), message);
      else errors.lists[list] ??= list === 'allow' ? 'Add at least one allow rule: with none, nobody can open the app.' : sentence(message);
    } else if (head === '(root)') {
      errors.other.push(sentence(message));
    } else {
      errors.other.push(sentence(problem));
    }
  }
  return errors;
}

/**
 * What the form can tell before asking the server: the same schema the server validates with, so an
 * empty id or name is caught on the first submit. The server checks again (and more: taken ids, hosts).
 */
export function formProblems(app: AppDefinition): string[] {
  // A blank field is said as "Enter …", not as the format it fails.
  // (An app its own proxy serves has no upstream: nothing to say about it.)
  const blank = (['id', 'name', 'publicUrl', 'upstream'] as const).filter((field) => app[field] === '');
  const parsed = appSchema.safeParse(app);
  const found = parsed.success ? [] : formatIssues(parsed.error.issues).filter((problem) => !blank.some((field) => problem.startsWith(`${field}:`)));
  return [...blank.map((field) => `${field}: required`), ...found];
}
