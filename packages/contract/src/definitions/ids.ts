import { z } from 'zod';
import { ID_PATTERN } from '../paths.js';

export const idSchema = z.string().regex(ID_PATTERN, 'must be lowercase letters, digits and dashes (at most 63)');
