import { readFile, writeFile } from 'node:fs/promises';
import type { Config } from '../../libs/config/config.js';
import { createTargetCheck } from '../../libs/delivery/allowed-target.js';
import { ValidationError } from '../../libs/errors/errors.js';
import { loadOrCreateKeyFile } from '../../libs/secrets/key-file.js';
import { createSecretBox } from '../../libs/secrets/secret-box.js';
import type { Store } from '../../libs/store/store.js';
import type { Tenant } from '../../libs/tenancy/tenant.js';
import { destinationTransfer } from '../../libs/transfer/destination-transfer.js';
import { exportResources } from '../../libs/transfer/export-service.js';
import { CONFLICT_STRATEGIES } from '../../libs/transfer/import-request.js';
import { importResources } from '../../libs/transfer/import-service.js';
import { sourceTransfer } from '../../libs/transfer/source-transfer.js';
import type { TransferDeps, TransferKind, TransferRow } from '../../libs/transfer/transfer-kind.js';
import { progressBar } from './progress-bar.js';

export const TRANSFER_USAGE = `  relay export sources|destinations [--org <slug>] [--include-sensitive] [--out <file>]
  relay import sources|destinations --file <file> --strategy skip|rename|overwrite [--org <slug>] [--validate-only]`;

export const TRANSFER_OPTIONS = {
  'include-sensitive': { type: 'boolean' },
  out: { type: 'string' },
  file: { type: 'string' },
  strategy: { type: 'string' },
  'validate-only': { type: 'boolean' },
} as const;

export type CommandFlags = Readonly<Record<string, string | boolean | undefined>>;

/** What a command prints on stdout, and the exit code: an import that failed entries exits 1. */
export interface CommandOutcome {
  output: string;
  exitCode: number;
}

export type TransferCommand = (store: Store, flags: CommandFlags, config: Config) => Promise<CommandOutcome>;

/** The same domain functions as the API, with the secrets the relay itself would use. */
async function transferDeps(store: Store, config: Config): Promise<TransferDeps> {
  return {
    store,
    secrets: createSecretBox(config.encryptionKey ?? (await loadOrCreateKeyFile(config.dataDir))),
    now: Date.now,
    checkTarget: createTargetCheck({ blockPrivateDestinations: config.blockPrivateDestinations, ownBrokers: config.kafkaBrokers }),
  };
}

/** `--org`, or the relay's own organization (`RELAY_ORG`). */
async function tenantOf(store: Store, flags: CommandFlags, config: Config): Promise<Tenant> {
  const slug = typeof flags.org === 'string' ? flags.org : config.org;
  const org = await store.organizations.bySlug(slug);
  if (!org) throw new ValidationError(`--org must name an existing organization; "${slug}" does not exist`);
  return { org };
}

async function readJsonFile(file: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new ValidationError(`--file ${file} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new ValidationError(`${file} is not valid JSON: ${(error as Error).message}`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new ValidationError(`${file} must hold a JSON object: an export, or {"<collection>": [...]}`);
  }
  return parsed as Record<string, unknown>;
}

function exportCommand<Row extends TransferRow, Draft>(kind: TransferKind<Row, Draft>): TransferCommand {
  return async (store, flags, config) => {
    const tenant = await tenantOf(store, flags, config);
    const includeSensitive = flags['include-sensitive'] === true;
    const deps = await transferDeps(store, config);
    const progress = progressBar();
    const envelope = await exportResources(deps, tenant, kind, { includeSensitive, onProgress: progress.listener }).finally(() => progress.stop());
    const json = `${JSON.stringify(envelope, null, 2)}\n`;
    if (typeof flags.out !== 'string') return { output: json.trimEnd(), exitCode: 0 };
    // A file with secrets in clear is for its owner only.
    await writeFile(flags.out, json, { mode: includeSensitive ? 0o600 : 0o644 });
    const count = (envelope[kind.collection] as unknown[]).length;
    return { output: `exported ${count} ${kind.collection} of ${tenant.org.slug} to ${flags.out}`, exitCode: 0 };
  };
}

function importCommand<Row extends TransferRow, Draft>(kind: TransferKind<Row, Draft>): TransferCommand {
  return async (store, flags, config) => {
    if (typeof flags.file !== 'string') throw new ValidationError('--file is required: the JSON file to import');
    if (!(CONFLICT_STRATEGIES as readonly unknown[]).includes(flags.strategy)) {
      throw new ValidationError(`--strategy must be one of ${CONFLICT_STRATEGIES.join(', ')}`);
    }
    const tenant = await tenantOf(store, flags, config);
    const body = { ...(await readJsonFile(flags.file)), conflictStrategy: flags.strategy, validateOnly: flags['validate-only'] === true };
    const deps = await transferDeps(store, config);
    const progress = progressBar();
    const result = await importResources(deps, tenant, kind, body, { onProgress: progress.listener }).finally(() => progress.stop());
    const ok = 'valid' in result ? result.valid : result.success;
    return { output: JSON.stringify(result, null, 2), exitCode: ok ? 0 : 1 };
  };
}

/** `relay export|import sources|destinations`: configuration as code, straight against the store (no HTTP). */
export const transferCommands: Record<string, TransferCommand> = {
  'export sources': exportCommand(sourceTransfer),
  'export destinations': exportCommand(destinationTransfer),
  'import sources': importCommand(sourceTransfer),
  'import destinations': importCommand(destinationTransfer),
};
