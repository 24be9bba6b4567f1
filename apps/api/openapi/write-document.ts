import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { openApiDocument } from '../api-operations.js';

/** Where the committed copy lives; a spec fails when it differs from what the relay serves. */
export const COMMITTED_DOCUMENT = fileURLToPath(new URL('../../../docs/openapi.json', import.meta.url));

export const documentText = () => `${JSON.stringify(openApiDocument(), null, 2)}\n`;

// `npm run openapi`: writes docs/openapi.json from the operations' schemas.
if (process.argv[1] && fileURLToPath(import.meta.url) === fs.realpathSync(process.argv[1])) {
  fs.writeFileSync(COMMITTED_DOCUMENT, documentText());
  process.stdout.write(`wrote ${COMMITTED_DOCUMENT}\n`);
}
