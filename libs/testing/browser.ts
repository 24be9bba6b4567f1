import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Context } from 'mocha';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

/** Debian's package (`apt-get install -y chromium`, as .ci/run does); playwright-core never downloads one. */
export const CHROMIUM_PATH = '/usr/bin/chromium';

/** No network beyond the pages under test, no background updates, nothing kept between runs. */
const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface TestBrowser {
  page: Page;
  context: BrowserContext;
  close(): Promise<void>;
}

/** A real Chromium with a fresh profile (deleted on close). */
export async function openChromium(): Promise<TestBrowser> {
  const profile = mkdtempSync(join(tmpdir(), 'relay-chromium-'));
  // A persistent context is how playwright takes a user-data-dir.
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: CHROMIUM_FLAGS,
    viewport: { width: 1280, height: 900 },
  });
  const page = context.pages()[0] ?? (await context.newPage());
  return {
    page,
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/**
 * Chromium for a suite. Without it the suite skips with the reason printed, except on CI (`CI=true`),
 * where the browser tests are mandatory and a missing Chromium fails.
 */
export async function launchChromium(mocha: Context): Promise<TestBrowser> {
  if (!existsSync(CHROMIUM_PATH)) {
    const reason = `Chromium is not installed at ${CHROMIUM_PATH} (apt-get install -y chromium)`;
    if (process.env.CI === 'true') throw new Error(`${reason}; the browser tests are mandatory when CI=true`);
    console.log(`      skipped: ${reason}`);
    mocha.skip();
  }
  return openChromium();
}

/** Screenshots for people (CI keeps the folder); created on first use, gitignored. */
export function screenshotFolder(name: string): string {
  const folder = join(process.cwd(), 'test-artifacts', name);
  mkdirSync(folder, { recursive: true });
  return folder;
}

/**
 * Controls whose computed accessible name is empty, read from Chromium's own accessibility tree
 * (what a screen reader announces), not guessed from attributes.
 */
export async function unnamedControls(page: Page): Promise<string[]> {
  const session = await page.context().newCDPSession(page);
  try {
    const { nodes } = (await session.send('Accessibility.getFullAXTree')) as {
      nodes: { ignored: boolean; role?: { value: string }; name?: { value: string } }[];
    };
    const controls = new Set(['button', 'link', 'textbox', 'searchbox', 'combobox', 'checkbox', 'spinbutton', 'radio', 'progressbar']);
    return nodes
      .filter((node) => !node.ignored && controls.has(node.role?.value ?? '') && !(node.name?.value ?? '').trim())
      .map((node) => node.role!.value);
  } finally {
    await session.detach();
  }
}
