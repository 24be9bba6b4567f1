import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { createHttpApp } from '../../libs/http/http-app.js';
import { startHttpServer, type RunningServer } from '../../libs/http/http-server.js';
import { createLogger } from '../../libs/logging/logger.js';
import { CONSOLE_BUILD_DIR, loadConsoleAssets, type ConsoleAssets } from './console-assets.js';
import { consoleRouter } from './console-router.js';

/** The budget for the first load: the page's scripts, as sent compressed. */
const FIRST_LOAD_SCRIPT_BUDGET = 250 * 1024;

const TRACE_TEMPLATE = 'http://jaeger.test:16686/trace/{traceId}';

async function serve(assets: ConsoleAssets | undefined): Promise<RunningServer> {
  return startHttpServer(createHttpApp([consoleRouter(assets, { traceUrlTemplate: TRACE_TEMPLATE })], createLogger({ level: 'silent' })), { port: 0, host: '127.0.0.1' });
}

const get = (server: RunningServer, path: string, headers: Record<string, string> = {}) => request(`${server.url}${path}`, { headers });

describe('console files at /console', () => {
  let server: RunningServer;
  before(async () => {
    const assets = await loadConsoleAssets();
    if (!assets) throw new Error(`The console is not built in ${CONSOLE_BUILD_DIR}: run npm run build`);
    server = await serve(assets);
  });
  after(() => server?.close());

  it('serves the page gzipped when asked, never cached stale, with a policy that loads nothing from elsewhere', async () => {
    const page = await get(server, '/console', { 'accept-encoding': 'gzip' });
    expect(page.statusCode).to.equal(200);
    expect(page.headers['content-type']).to.equal('text/html; charset=utf-8');
    expect(page.headers['content-encoding']).to.equal('gzip');
    expect(page.headers['cache-control']).to.equal('no-cache');
    expect(page.headers['content-security-policy']).to.contain("default-src 'self'").and.contain("connect-src 'self'").and.contain("frame-ancestors 'none'");
    await page.body.dump();
    const plain = await get(server, '/console/');
    expect(plain.headers['content-encoding']).to.equal(undefined);
    expect(await plain.body.text()).to.contain('<div id="app">');
  });

  it("tells the console where an event's trace is (RELAY_TRACE_URL_TEMPLATE)", async () => {
    const answer = await get(server, '/console/settings.json');
    expect(answer.statusCode).to.equal(200);
    expect(answer.headers['cache-control']).to.equal('no-cache');
    expect(await answer.body.json()).to.deep.equal({ traceUrlTemplate: TRACE_TEMPLATE });
  });

  it('keeps the first load under 250 KB of compressed script, and names no other origin', async () => {
    const html = await (await get(server, '/console')).body.text();
    const scripts = [...html.matchAll(/<script[^>]+src="([^"]+)"/g)].map((match) => match[1]!);
    expect(scripts).to.have.length.greaterThan(0);
    expect(html).not.to.match(/(src|href)="(https?:)?\/\//);
    let compressed = 0;
    for (const script of scripts) {
      const answer = await get(server, script, { 'accept-encoding': 'gzip' });
      expect(answer.statusCode).to.equal(200);
      expect(answer.headers['cache-control']).to.contain('immutable');
      compressed += (await answer.body.arrayBuffer()).byteLength;
    }
    console.log(`      first load: ${scripts.length} script(s), ${(compressed / 1024).toFixed(1)} KB gzip (budget ${FIRST_LOAD_SCRIPT_BUDGET / 1024} KB)`);
    expect(compressed).to.be.below(FIRST_LOAD_SCRIPT_BUDGET);
  });

  it('answers a file it does not have with 404 in the error envelope', async () => {
    const answer = await get(server, '/console/assets/missing.js');
    expect(answer.statusCode).to.equal(404);
    expect(await answer.body.json()).to.deep.equal({ error: 'Not Found', message: 'No console file at /console/assets/missing.js', code: 'NOT_FOUND' });
  });

  it('answers 503 saying how to build it when the console was not built', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'relay-console-'));
    const unbuilt = await serve(await loadConsoleAssets(empty));
    try {
      const answer = await get(unbuilt, '/console');
      expect(answer.statusCode).to.equal(503);
      expect(((await answer.body.json()) as { message: string }).message).to.contain('npm run build');
    } finally {
      await unbuilt.close();
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
