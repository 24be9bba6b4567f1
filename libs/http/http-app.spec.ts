import Router from '@koa/router';
import { expect } from 'chai';
import { Writable } from 'node:stream';
import { request } from 'undici';
import { MalformedRowError } from '../store/row-schema.js';
import { createLogger } from '../logging/logger.js';
import { createHttpApp } from './http-app.js';
import { startHttpServer, type RunningServer } from './http-server.js';

describe('createHttpApp', () => {
  const logLines: string[] = [];
  let server: RunningServer;

  before(async () => {
    const router = new Router();
    router.get('/things', (ctx) => {
      ctx.body = [];
    });
    router.get('/broken', () => {
      throw new MalformedRowError('sources', 'slug: Required');
    });
    const destination = new Writable({
      write(chunk, _encoding, done) {
        logLines.push(String(chunk));
        done();
      },
    });
    server = await startHttpServer(createHttpApp([router], createLogger({ level: 'info', destination })), { port: 0, host: '127.0.0.1' });
  });

  after(() => server.close());

  it('answers a fault of its own (a malformed row) with the plain 500 envelope, and logs what it was', async () => {
    logLines.length = 0;
    const response = await request(`${server.url}/broken`);
    expect(response.statusCode).to.equal(500);
    expect(await response.body.json()).to.deep.equal({ error: 'Internal Server Error', message: 'An unexpected error occurred; it has been logged', code: 'INTERNAL_ERROR' });
    const errors = logLines.map((line) => JSON.parse(line) as { level: number; msg: string; err?: { message: string } }).filter((line) => line.level >= 50);
    expect(errors).to.have.length(1);
    expect(errors[0]!.err?.message).to.equal('a row of sources is malformed: slug: Required');
  });

  for (const method of ['TRACE', 'PROPFIND', 'PUT']) {
    it(`answers ${method} on a path that serves only GET with 405 in the envelope, and logs no error`, async () => {
      logLines.length = 0;
      const response = await request(`${server.url}/things`, { method });
      const body = (await response.body.json()) as Record<string, unknown>;
      expect(response.statusCode).to.equal(405);
      expect(body).to.deep.include({ error: 'Method Not Allowed', code: 'METHOD_NOT_ALLOWED' });
      expect(logLines.filter((line) => JSON.parse(line).level >= 50)).to.deep.equal([]);
    });
  }
});
