export { buildDemoApp, type DemoAppOptions } from './buildDemoApp.js';
export { startDemoApp, type DemoApp, type StartDemoAppOptions } from './startDemoApp.js';
export { createAssertionVerifier, type AssertionVerifierOptions, type VerifyAssertion } from './verifyAssertion.js';
export type { AssertionReport, WhoamiReport } from './whoami.js';
export { signInWithGatehouse, RP_PATHS, type SignInWithGatehouseOptions } from './rp/signInWithGatehouse.js';
export { verifyLogoutToken, InvalidLogoutToken, BACKCHANNEL_LOGOUT_EVENT, type LogoutTokenCheck } from './rp/logoutToken.js';
