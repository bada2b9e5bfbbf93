import { z } from 'zod';
import { defineRoute } from '../route.js';
import { requestText } from './common.js';

/** An OpenID Provider login step's id (oidc-provider's interaction uid: base64url). */
const uidParam = requestText(64).min(1);

/**
 * A third-party app (an OpenID Connect client whose `oidc.thirdParty` is true) waiting for the person's
 * consent: what the consent page shows. Only the Gatehouse session the sign-in belongs to may read it;
 * any other gets 404, as for an unknown step.
 */
export const consentRequestSchema = z.object({
  uid: z.string(),
  app: z.object({ id: z.string(), name: z.string() }),
  /** The origin of the redirect URI the app asked to be answered at: where the person goes next. */
  origin: z.string(),
  /** The scopes asked that the app may have (never more than its `oidc.scopes`): what Allow grants. */
  scopes: z.array(z.string()),
  /** Who is signed in: the person the app learns about. */
  person: z.object({ email: z.string(), name: z.string() }),
});
export type ConsentRequest = z.output<typeof consentRequestSchema>;

/** Where the browser goes on: the authorization endpoint's resume address, which answers the app. */
export const consentAnswerSchema = z.object({ location: z.string() });
export type ConsentAnswer = z.output<typeof consentAnswerSchema>;

/** `GET /api/consent/:uid`: the pending consent of this session's sign-in to a third-party app. */
export const getConsent = defineRoute({
  method: 'GET',
  path: '/api/consent/:uid',
  access: 'session',
  tag: 'account',
  summary: 'A third-party app asking for your consent',
  params: z.object({ uid: uidParam }),
  responses: { 200: consentRequestSchema },
});

/** `POST /api/consent/:uid/allow`: grant the app the scopes shown, then go on to the app. */
export const allowConsent = defineRoute({
  method: 'POST',
  path: '/api/consent/:uid/allow',
  access: 'session',
  tag: 'account',
  summary: 'Allow a third-party app what it asks',
  params: z.object({ uid: uidParam }),
  responses: { 200: consentAnswerSchema },
});

/** `POST /api/consent/:uid/deny`: refuse; the app is answered `access_denied` at its redirect URI. */
export const denyConsent = defineRoute({
  method: 'POST',
  path: '/api/consent/:uid/deny',
  access: 'session',
  tag: 'account',
  summary: 'Refuse a third-party app',
  params: z.object({ uid: uidParam }),
  responses: { 200: consentAnswerSchema },
});
