import { z } from 'zod';

/** The longest overlap of an old and a new secret: a week. */
export const MAX_GRACE_SECONDS = 604_800;

/** The body of both rotate operations (DESIGN 7 "Secret rotation with overlap"). */
export const rotationBody = z
  .strictObject({
    graceSeconds: z.number().int().min(0).max(MAX_GRACE_SECONDS).optional().meta({ description: 'How long the previous secret stays valid; 0 (the default) ends it at once' }),
  })
  .meta({ id: 'SecretRotation' });
