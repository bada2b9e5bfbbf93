import { describe, expect, it } from 'vitest';
import { opAnswerHeaders } from '../../src/provide/mount.js';
import { OP_ANSWER_HEADERS } from '../../src/provide/pages.js';

describe('the headers of the OpenID Provider’s answers', () => {
  it('carry Strict-Transport-Security on an https portal, as the portal’s other answers do', () => {
    // Threat: a first visit to the OP over plain http, downgraded by a network attacker, on a portal served over https.
    expect(opAnswerHeaders(true)['strict-transport-security']).toBe('max-age=31536000');
    expect(opAnswerHeaders(false)['strict-transport-security']).toBeUndefined();
  });

  it('keep the policy that lets form_post run only its own script', () => {
    // Threat: a script of the portal's origin running on the page that carries the code.
    for (const secure of [true, false]) expect(opAnswerHeaders(secure)['content-security-policy']).toBe(OP_ANSWER_HEADERS['content-security-policy']);
  });
});
