/**
 * The identity Gatehouse passes to apps (PRODUCT.md "Identity passed to apps"). Header values must be
 * visible ASCII; anything else (a name such as "李雷", a group with a comma) is sent in the RFC 8187
 * ext-value form `UTF-8''<percent-encoded UTF-8>`, which an app recognises by that prefix — and so is
 * a value that would itself read as one (`UTF-8''admins`). Groups are comma-separated, each one encoded
 * on its own when needed, at most 100.
 */
export const IDENTITY_HEADERS = {
  user: 'x-gatehouse-user',
  email: 'x-gatehouse-email',
  name: 'x-gatehouse-name',
  groups: 'x-gatehouse-groups',
  assertion: 'x-gatehouse-assertion',
} as const;

export const MAX_GROUPS_UPSTREAM = 100;

export interface Identity {
  userId: string;
  email: string;
  name: string;
  groups: readonly string[];
  assertion: string;
}

const PLAIN = /^[\x20-\x7e]*$/;
const PLAIN_GROUP = /^[\x21-\x2b\x2d-\x7e]+$/; // visible ASCII without the comma separator or spaces
/**
 * A plain value that already reads as an ext-value (RFC 8187 §3.2.1: charset `'` [language] `'`, the
 * charset case-insensitive): an app decoding the prefix would read the group `UTF-8''admins` as
 * `admins`, or `iso-8859-1''x` as `x`. Such a value is encoded like any other that is not plain.
 */
const LOOKS_ENCODED = /^[A-Za-z0-9!#$%&+^_`{}~-]+'[A-Za-z0-9-]*'/;

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * The ext-value form of any string: UTF-8, percent-encoded except RFC 8187's attr-char. Unlike
 * encodeURIComponent alone, `'` (the form's own delimiter), `(`, `)` and `*` are encoded too: the plain
 * value `UTF-8''admins` goes as `UTF-8''UTF-8%27%27admins`, which reads back as nothing else.
 */
function extValue(value: string): string {
  // A lone surrogate (JSON allows "\ud800") is no UTF-8: U+FFFD instead, as encodeURIComponent would throw.
  const wellFormed = value.replace(LONE_SURROGATE, '\ufffd');
  return `UTF-8''${encodeURIComponent(wellFormed).replace(/['()*]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`)}`;
}

export function encodeHeaderValue(value: string): string {
  return PLAIN.test(value) && !LOOKS_ENCODED.test(value) ? value : extValue(value);
}

function encodeGroup(group: string): string {
  return PLAIN_GROUP.test(group) && !LOOKS_ENCODED.test(group) ? group : extValue(group);
}

/** All five headers, always: empty values where there is no identity, so a proxy overwrites any copies. */
export function identityHeaders(identity: Identity | undefined): Record<string, string> {
  if (!identity) {
    return { [IDENTITY_HEADERS.user]: '', [IDENTITY_HEADERS.email]: '', [IDENTITY_HEADERS.name]: '', [IDENTITY_HEADERS.groups]: '', [IDENTITY_HEADERS.assertion]: '' };
  }
  return {
    [IDENTITY_HEADERS.user]: encodeHeaderValue(identity.userId),
    [IDENTITY_HEADERS.email]: encodeHeaderValue(identity.email),
    [IDENTITY_HEADERS.name]: encodeHeaderValue(identity.name),
    [IDENTITY_HEADERS.groups]: identity.groups.slice(0, MAX_GROUPS_UPSTREAM).map(encodeGroup).join(','),
    [IDENTITY_HEADERS.assertion]: identity.assertion,
  };
}

/** What every identity header's name starts with, in its canonical spelling. */
export const IDENTITY_HEADER_PREFIX = 'x-gatehouse-';

/**
 * A header name as the most lenient reader sees it: lower case, `_` read as `-`. Some servers and
 * frameworks (CGI, WSGI, PHP, older Gunicorn) read `X_Gatehouse_User` as `X-Gatehouse-User`, so every
 * header Gatehouse removes is removed in every spelling. Node lower-cases header names already, so the
 * usual name comes back as it is, without a copy.
 */
export function canonicalHeaderName(name: string): string {
  const lower = name.toLowerCase();
  return lower.includes('_') ? lower.replaceAll('_', '-') : lower;
}

/** Whether a request header is (a spelling of) one of ours (canonicalHeaderName). */
export function isIdentityHeader(name: string): boolean {
  const first = name.charCodeAt(0);
  if (name.length <= 12 || (first !== 0x78 && first !== 0x58)) return false; // not x…/X…
  return canonicalHeaderName(name).startsWith(IDENTITY_HEADER_PREFIX);
}
