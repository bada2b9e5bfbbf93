/** The response schema of `POST /api/admin/providers/discover` (see authenticate/discoveryPreview.ts). */
const strings = { type: 'array', items: { type: 'string' } } as const;
const url = { type: 'string' } as const;
const optionalUrl = { type: ['string', 'null'] } as const;

export const discoveryPreviewSchema = {
  type: 'object',
  required: [
    'issuer',
    'authorizationEndpoint',
    'tokenEndpoint',
    'userinfoEndpoint',
    'endSessionEndpoint',
    'jwksUri',
    'scopesSupported',
    'claimsSupported',
    'codeChallengeMethodsSupported',
    'pkce',
    'pushedAuthorizationRequests',
    'backchannelLogout',
    'idTokenSigningAlgValuesSupported',
    'tokenEndpointAuthMethodsSupported',
  ],
  properties: {
    issuer: url,
    authorizationEndpoint: url,
    tokenEndpoint: url,
    userinfoEndpoint: optionalUrl,
    endSessionEndpoint: optionalUrl,
    jwksUri: url,
    scopesSupported: strings,
    claimsSupported: strings,
    codeChallengeMethodsSupported: strings,
    pkce: { type: 'string', enum: ['S256', 'not-advertised', 'unsupported'] },
    pushedAuthorizationRequests: { type: 'string', enum: ['required', 'supported', 'no'] },
    backchannelLogout: { type: 'boolean' },
    idTokenSigningAlgValuesSupported: strings,
    tokenEndpointAuthMethodsSupported: strings,
  },
} as const;
