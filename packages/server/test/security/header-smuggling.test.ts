import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeHeaderValue, identityHeaders } from '../../src/authorize/identityHeaders.js';
import { upstreamRequestHeaders, type UpstreamContext } from '../../src/proxy/upstreamHeaders.js';
import { canonical, FAMILY } from './support/headerFamilies.js';
import { exchange, rawGet, received, signIn, startProxyRig, type ProxyRig } from './support/proxyRig.js';

/**
 * Header smuggling: getting a header to the app that Gatehouse meant to remove or set itself, by writing
 * it so that Gatehouse and the app read it differently — underscores for hyphens (CGI, WSGI, PHP and
 * older Gunicorn read `X_Gatehouse_Email` as `X-Gatehouse-Email`), other cases, repeats, comma-joined
 * values, obs-fold continuation lines, or a Connection header naming Gatehouse's own headers. Asserted
 * end to end through the real proxy into an upstream that records what it received, and as a property of
 * the header filter itself.
 *
 * What Node's parser does (and these tests pin): header names are lower-cased; a repeated unknown header
 * is joined with ", " into one value (X-Forwarded-For too); an obs-fold line (RFC 9112 §5.2) or a space
 * before the colon is refused with 400 before any handler runs.
 */
let rig: ProxyRig;
let cookie: string;

beforeAll(async () => {
  rig = await startProxyRig();
  ({ cookie } = await signIn(rig));
}, 30_000);

afterAll(async () => {
  await rig?.close();
});

const IDENTITY = ['X-Gatehouse-User', 'X-Gatehouse-Email', 'X-Gatehouse-Name', 'X-Gatehouse-Groups', 'X-Gatehouse-Assertion'];
const REWRITE = ['X-Original-URL', 'X-Rewrite-URL', 'X-Original-URI', 'X-Forwarded-Uri', 'X-Forwarded-Prefix'];
/** The upstream's headers whose canonical name is `name`, as [spelling, value] pairs. */
const spellingsOf = (headers: Record<string, string>, name: string) => Object.entries(headers).filter(([header]) => canonical(header) === canonical(name));

describe('identity headers, smuggled', () => {
  // Threat: identity spoofing on a public path: an app reading X_Gatehouse_Email as its user.
  it.each([
    ['underscores', 'X_Gatehouse_Email'],
    ['mixed', 'x-gatehouse_email'],
    ['upper case', 'X-GATEHOUSE-EMAIL'],
    ['lower case', 'x-gatehouse-email'],
  ])('%s (%s) never reaches the app on a public path', async (_label, name) => {
    const seen = received(await rawGet(rig, '/public/x', [[name, 'admin@example.com']]));
    expect(Object.keys(seen.headers).filter((header) => canonical(header).startsWith('x-gatehouse-'))).toEqual([]);
  });

  // Threat: a second copy next to Gatehouse's own, which an app taking the first (or last) would read.
  it.each([
    ['repeated', [['X-Gatehouse-Email', 'admin@example.com'], ['X-Gatehouse-Email', 'root@example.com']]],
    ['comma-joined', [['X-Gatehouse-Groups', 'admins, staff']]],
    ['every spelling at once', IDENTITY.flatMap((name) => [[name, 'admins'], [name.replaceAll('-', '_'), 'admins'], [name.toUpperCase(), 'admins']])],
  ] as Array<[string, Array<[string, string]>]>)('%s: the app sees only the signed-in person’s', async (_label, lines) => {
    const seen = received(await rawGet(rig, '/allowed', [['Cookie', cookie], ...lines]));
    for (const name of IDENTITY) expect(spellingsOf(seen.headers, name).map(([spelling]) => spelling)).toEqual([name.toLowerCase()]);
    expect(seen.headers['x-gatehouse-email']).toBe('mallory@example.com');
    expect(seen.headers['x-gatehouse-groups']).toBe('');
  });

  // Threat: Connection naming Gatehouse's own headers, so that a hop removes them after Gatehouse set
  // them (the Caddy issue). Gatehouse drops what Connection names from the client's copy only.
  it('Connection cannot remove the headers Gatehouse sets', async () => {
    const named = 'X-Gatehouse-Email, X-Gatehouse-User, X-Forwarded-For, X-Real-IP, X-Forwarded-Host, X-Forwarded-Proto, X-Forwarded-Port';
    // Node joins this Connection with the one rawGet adds ("close").
    const seen = received(await rawGet(rig, '/allowed', [['Cookie', cookie], ['Connection', named]]));
    expect(seen.headers['x-gatehouse-email']).toBe('mallory@example.com');
    expect(seen.headers['x-real-ip']).toBe('127.0.0.1');
    expect(seen.headers['x-forwarded-for']).toBe('127.0.0.1');
    expect(seen.headers['x-forwarded-host']).toBe(rig.appHost);
    expect(seen.headers.connection).not.toMatch(/gatehouse|forwarded|real-ip/i);
  });
});

describe('rewrite headers, smuggled', () => {
  // Threat: X-Original-URL & co. in a spelling the app still reads, on a public path.
  it.each(REWRITE.flatMap((name) => [name, name.replaceAll('-', '_'), name.toUpperCase(), name.toLowerCase().replace('-', '_')]))(
    '%s never reaches the app',
    async (name) => {
      const seen = received(await rawGet(rig, '/public/x', [[name, '/private'], [name, '/admin']]));
      expect(seen.url).toBe('/public/x');
      expect(spellingsOf(seen.headers, name)).toEqual([]);
    },
  );

  // Threat: request smuggling against an upstream that reads `_` as `-`: a second framing header.
  it.each(['Content_Length', 'Transfer_Encoding', 'content_length'])('%s never reaches the app', async (name) => {
    const seen = received(await rawGet(rig, '/public/x', [[name, name.toLowerCase().startsWith('content') ? '5' : 'chunked']]));
    expect(Object.keys(seen.headers).filter((header) => header.includes('_'))).toEqual([]);
  });
});

describe('identity values that look encoded', () => {
  /** How an app reads an identity value (RFC 8187 ext-value, the only encoding Gatehouse uses). */
  const decode = (value: string) => (/^utf-8''/i.test(value) ? decodeURIComponent(value.slice(7)) : value);

  // Threat: a group (or name, or email local part) an IdP lets a person choose, spelled `UTF-8''admins`,
  // read by an app that decodes Gatehouse's encoding as the group `admins`.
  it.each(["UTF-8''admins", "utf-8''admins", "UTF-8'en'admins", "iso-8859-1''admins", "UTF-8''%61dmins"])('the group %s reaches the app as itself', (group) => {
    const groups = identityHeaders({ userId: 'u', email: 'e@example.com', name: group, groups: ['staff', group], assertion: '' });
    expect(groups['x-gatehouse-groups']!.split(',').map(decode)).toEqual(['staff', group]);
    expect(decode(groups['x-gatehouse-name']!)).toBe(group);
    expect(decode(encodeHeaderValue(group))).toBe(group);
  });

  it('what is plain stays plain, and what is encoded decodes to the value', () => {
    expect(encodeHeaderValue("O'Brien")).toBe("O'Brien");
    expect(encodeHeaderValue('staff')).toBe('staff');
    expect(encodeHeaderValue("UTF-8''admins")).toBe("UTF-8''UTF-8%27%27admins");
    // Never failing: a lone surrogate (JSON allows one) becomes U+FFFD instead of throwing.
    expect(encodeHeaderValue('\ud800x')).toBe("UTF-8''%EF%BF%BDx");
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), (text) => {
        const encoded = encodeHeaderValue(text);
        expect(encoded).toMatch(/^[\x20-\x7e]*$/);
        expect(decode(encoded)).toBe(text);
      }),
    );
  });
});

describe('what Node refuses before Gatehouse reads a header', () => {
  // Threat: an obs-fold line that one parser joins to the previous header and another reads as its own
  // (`X-Foo: a` + ` X-Gatehouse-Email: admin@…`). Refused as a catalogue answer; nothing goes upstream.
  it.each([
    ['obs-fold', `X-Foo: a\r\n X-Gatehouse-Email: admin@example.com`],
    ['obs-fold with a tab', `X-Original-URL: /public/x\r\n\t/../private`],
    ['a space before the colon', `X-Gatehouse-Email : admin@example.com`],
  ])('%s is a 400 problem, and nothing reaches the app', async (_label, lines) => {
    const marker = `/public/${Math.random().toString(36).slice(2)}`;
    const answer = await exchange(rig, `GET ${marker} HTTP/1.1\r\nHost: ${rig.appHost}\r\n${lines}\r\nConnection: close\r\n\r\n`);
    expect(answer.status).toBe(400);
    expect(answer.headers['content-type']).toBe('application/problem+json');
    expect(JSON.parse(answer.body)).toMatchObject({ code: 'bad_request', status: 400 });
    expect(rig.upstream.last?.url).not.toBe(marker);
  });
});

/**
 * Property: for any request headers — names drawn from the identity, forwarding, rewrite and method
 * families in any case with any `_`/`-`, plus unrelated names — the upstream request holds no spelling
 * of a family header but the ones Gatehouse sets, with Gatehouse's values, and every unrelated header
 * unchanged.
 */
const FAMILIES = [...IDENTITY, ...FAMILY];
const FAMILY_NAMES = new Set(FAMILIES.map(canonical));
/** Names an upstream request is framed or routed by, or that Gatehouse handles apart: not "unrelated". */
const SPECIAL = new Set(['host', 'cookie', 'connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'expect', 'content-length']);

/** A family name in a random spelling: each letter in either case, each `-` maybe `_`. */
const familySpelling = fc.constantFrom(...FAMILIES).chain((name) =>
  fc.array(fc.boolean(), { minLength: name.length * 2, maxLength: name.length * 2 }).map((flips) =>
    [...name].map((char, i) => (char === '-' ? (flips[i]! ? '_' : '-') : flips[name.length + i]! ? char.toUpperCase() : char.toLowerCase())).join(''),
  ),
);
/** An unrelated header name (a token), never a spelling of a family or special one. */
const unrelatedName = fc
  .stringMatching(/^[a-z][a-z0-9_-]{0,20}$/)
  .filter((name) => !FAMILY_NAMES.has(canonical(name)) && !SPECIAL.has(canonical(name)) && !canonical(name).startsWith('x-gatehouse-'));
/** A header value Node passes through as it is: visible ASCII, no surrounding whitespace. */
const value = fc.stringMatching(/^[\x21-\x7e]([\x20-\x7e]{0,30}[\x21-\x7e])?$/);

const context: UpstreamContext = {
  forwardedFor: '198.51.100.7, 10.0.0.2',
  clientAddress: '198.51.100.7',
  publicOrigin: 'https://app.example.com',
  preserveHost: false,
  identity: { 'x-gatehouse-user': 'u1', 'x-gatehouse-email': 'alice@example.com', 'x-gatehouse-name': 'Alice', 'x-gatehouse-groups': 'staff', 'x-gatehouse-assertion': 'jwt' },
};
const OURS: Record<string, string> = {
  'x-forwarded-for': '198.51.100.7, 10.0.0.2',
  'x-real-ip': '198.51.100.7',
  'x-forwarded-host': 'app.example.com',
  'x-forwarded-proto': 'https',
  'x-forwarded-port': '443',
  ...context.identity,
};

describe('header stripping, as a property', () => {
  it('the filter: only Gatehouse’s spellings and values of the families, unrelated headers unchanged', () => {
    fc.assert(
      fc.property(fc.dictionary(familySpelling, value), fc.dictionary(unrelatedName, value), (family, unrelated) => {
        // Node lower-cases names; the filter is checked on the spelling as sent too, which is harder.
        for (const incoming of [{ ...family, ...unrelated }, Object.fromEntries(Object.entries({ ...family, ...unrelated }).map(([name, v]) => [name.toLowerCase(), v]))]) {
          const out = upstreamRequestHeaders(incoming, context);
          const familyOut = Object.fromEntries(Object.entries(out).filter(([name]) => FAMILY_NAMES.has(canonical(name))));
          expect(familyOut).toEqual(OURS);
          for (const [name, v] of Object.entries(incoming)) if (!FAMILY_NAMES.has(canonical(name))) expect(out[name]).toBe(v);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('end to end: what the upstream receives through the real proxy', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(familySpelling, value), { maxLength: 12 }),
        fc.uniqueArray(fc.tuple(unrelatedName, value), { maxLength: 6, selector: ([name]) => name }),
        async (family, unrelated) => {
          const seen = received(await rawGet(rig, '/allowed', [['Cookie', cookie], ...family, ...unrelated]));
          const familyOut = Object.fromEntries(Object.entries(seen.headers).filter(([name]) => FAMILY_NAMES.has(canonical(name))));
          expect(Object.keys(familyOut).sort()).toEqual([...IDENTITY.map((name) => name.toLowerCase()), 'x-forwarded-for', 'x-forwarded-host', 'x-forwarded-port', 'x-forwarded-proto', 'x-real-ip'].sort());
          expect(familyOut['x-gatehouse-email']).toBe('mallory@example.com');
          expect(familyOut['x-real-ip']).toBe('127.0.0.1');
          expect(familyOut['x-forwarded-for']).toBe('127.0.0.1');
          for (const [name, v] of unrelated) expect(seen.headers[name]).toBe(v);
        },
      ),
      { numRuns: 40 },
    );
  }, 60_000);
});
