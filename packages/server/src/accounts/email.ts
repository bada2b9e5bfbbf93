// The email rules are configuration's vocabulary too (admins, policies, domain lists), so they live at
// the bottom, in config/; accounts and everything else keep importing them from here.
export * from '../config/email.js';
