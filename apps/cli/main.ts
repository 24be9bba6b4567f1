#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { loadConfig, PLANS, type Config, type Plan } from '../../libs/config/config.js';
import { ConfigError, RelayError, ValidationError } from '../../libs/errors/errors.js';
import { parseInput } from '../../libs/http/validate.js';
import type { OrganizationRow } from '../../libs/store/entities/organization.js';
import { makeDataDirPrivate } from '../../libs/storage/private-data-dir.js';
import { indexAllPending, resetSearchIndex } from '../../libs/store/search-index.js';
import { openStore, type Store } from '../../libs/store/store.js';
import { createKey, createKeyBody, keyView, revokeKey } from '../../libs/keys/key-service.js';
import { TRANSFER_OPTIONS, TRANSFER_USAGE, transferCommands, type CommandOutcome } from './transfer-commands.js';

const USAGE = `Usage:
  relay orgs create --slug <slug> [--plan free|starter|pro|business|enterprise]
  relay orgs list
  relay keys create --org <slug> [--name <name>] [--scope admin|write|read]
  relay keys list --org <slug>
  relay keys revoke --org <slug> --id <key id>
  relay migrate
  relay search rebuild
${TRANSFER_USAGE}
Environment: DATABASE_URL (PostgreSQL) or RELAY_DATA_DIR (SQLite, default ./data).`;

type Command = (store: Store, flags: Record<string, string | undefined>, config: Config) => Promise<string | CommandOutcome>;

const SLUG = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

async function organization(store: Store, slug: string | undefined): Promise<OrganizationRow> {
  const org = slug ? await store.organizations.bySlug(slug) : null;
  if (!org) throw new ValidationError(`--org must name an existing organization${slug ? `; "${slug}" does not exist` : ''}`);
  return org;
}

const commands: Record<string, Command> = {
  'orgs create': async (store, { slug, plan = 'pro' }) => {
    if (!slug || !SLUG.test(slug)) throw new ValidationError('--slug must be lowercase alphanumeric with hyphens', [], 'INVALID_SLUG');
    if (!(PLANS as readonly string[]).includes(plan)) throw new ValidationError(`--plan must be one of ${PLANS.join(', ')}`);
    if (await store.organizations.bySlug(slug)) throw new ValidationError(`organization "${slug}" already exists`);
    const org = await store.organizations.create(slug, plan as Plan);
    return `created organization ${org.slug} (${org.id}, plan ${org.plan})`;
  },
  'orgs list': async (store) => {
    const orgs = await store.organizations.list();
    return orgs.map((org) => `${org.slug}\t${org.plan}\t${org.id}`).join('\n') || '(no organizations)';
  },
  'keys create': async (store, { org: slug, name = 'cli', scope = 'admin' }) => {
    const tenant = { org: await organization(store, slug) };
    const input = parseInput(createKeyBody, { name, scope }, 'Key');
    const created = await createKey({ store }, tenant, input);
    return `API key ${created.id} for ${tenant.org.slug}, scope ${created.scope} (shown once):\n${created.key}`;
  },
  'keys list': async (store, { org: slug }) => {
    const org = await organization(store, slug);
    const rows = (await store.apiKeys.findBy(org.id)).map(keyView);
    return rows.map((key) => [key.id, key.name, key.scope, key.prefix ?? '-', key.createdAt, key.lastUsedAt ?? 'never'].join('\t')).join('\n') || '(no keys)';
  },
  // Not announced (the CLI has no broker): running processes stop accepting the key within 30 s, when their cache expires.
  'keys revoke': async (store, { org: slug, id }) => {
    const org = await organization(store, slug);
    if (!id) throw new ValidationError('--id must name the key to revoke (see relay keys list)');
    await revokeKey({ store }, { org }, id);
    return `revoked ${id}; running relay processes refuse it within 30 s`;
  },
  // Opening the store applies pending migrations.
  migrate: async () => 'migrations applied',
  // For an index lost or suspected wrong, or kept in its former layout by migration 0019; a running relay
  // keeps serving complete (slower) searches meanwhile.
  'search rebuild': async (store) => {
    await resetSearchIndex(store.sql);
    return `search index rebuilt from the stored events: ${await indexAllPending(store.sql)} events indexed`;
  },
  ...transferCommands,
};

const OPTIONS = {
  slug: { type: 'string' },
  plan: { type: 'string' },
  org: { type: 'string' },
  name: { type: 'string' },
  scope: { type: 'string' },
  id: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  ...TRANSFER_OPTIONS,
} as const;

/** The command line, or null (after saying why) when it cannot be read: a typo is not a crash. */
function readArgs(argv: string[]) {
  try {
    return parseArgs({ args: argv, options: OPTIONS, allowPositionals: true });
  } catch (error) {
    if (!String((error as NodeJS.ErrnoException).code).startsWith('ERR_PARSE_ARGS')) throw error;
    process.stderr.write(`relay: ${(error as Error).message}\n${USAGE}\n`);
    return null;
  }
}

async function main(argv: string[]): Promise<number> {
  const args = readArgs(argv);
  if (!args) return 2;
  const { positionals, values } = args;
  const name = positionals.join(' ');
  const command = commands[name];
  if (values.help || !command) {
    process.stdout.write(`${USAGE}\n`);
    return values.help ? 0 : 2;
  }
  const config = loadConfig(process.env);
  const loosened = makeDataDirPrivate(config.dataDir).fixed;
  if (loosened.length > 0) process.stderr.write(`warning: made private (0700/0600), they were readable by others: ${loosened.join(', ')}\n`);
  const store = await openStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  // The files this command created (a first `relay migrate`) get the same mode.
  makeDataDirPrivate(config.dataDir);
  try {
    const result = await command(store, values as Record<string, string | undefined>, config);
    const { output, exitCode } = typeof result === 'string' ? { output: result, exitCode: 0 } : result;
    process.stdout.write(`${output}\n`);
    return exitCode;
  } finally {
    await store.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    const known = error instanceof RelayError || error instanceof ConfigError;
    process.stderr.write(`relay: ${known ? (error as Error).message : (error as Error)?.stack ?? String(error)}\n`);
    process.exit(1);
  },
);
