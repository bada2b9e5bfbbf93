export { builtInUserSets, defaultUsers, partnerUsers, subjectFor, type DevIdpUser } from './defaultUsers.js';
export type { DevIdpClient } from './providerConfiguration.js';
export { startDevIdp, type DevIdp, type DevIdpOptions } from './startDevIdp.js';
