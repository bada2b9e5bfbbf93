import { z } from 'zod';

/**
 * The id of a provider or an app: lowercase letters, digits and dashes, at most 63, starting with a
 * letter or digit. It appears in URLs (`/.gatehouse/callback/<provider>`, `/.gatehouse/auth/<app>`),
 * so it is the one pattern everywhere.
 */
export const ID_PATTERN = /^[a-z0-9][a-z0-9-]{0,62}$/;

export const idSchema = z.string().regex(ID_PATTERN, 'must be lowercase letters, digits and dashes (at most 63)');
