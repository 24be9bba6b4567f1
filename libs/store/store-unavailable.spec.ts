import { expect } from 'chai';
import { UnavailableError } from '../errors/errors.js';
import { isDependencyFailure } from '../pipeline/poison-records.js';
import { unusedLoopbackPort } from '../testing/free-port.js';
import { describeEachStore } from '../testing/store-targets.js';
import { openSqlClient } from './sql-client.js';

describeEachStore('the SQL client tells an unavailable database from a refused statement', (target) => {
  it('keeps a refused statement a record failure: the same statement would fail again', async function () {
    const location = await target.prepare(this);
    const sql = openSqlClient({ dataDir: location.dataDir, databaseUrl: location.databaseUrl });
    try {
      await sql.run('CREATE TABLE probe (id integer PRIMARY KEY)');
      await sql.run('INSERT INTO probe (id) VALUES (1)');
      const refused = await sql.run('INSERT INTO probe (id) VALUES (1)').catch((error: unknown) => error);
      expect(refused).to.have.property('code').that.matches(/^(23505|SQLITE_CONSTRAINT)/);
      expect(refused).not.to.be.instanceOf(UnavailableError);
      expect(isDependencyFailure(refused)).to.equal(false);
      const inWork = await sql.transaction(async () => {
        throw new TypeError('thrown by the work, not the database');
      }).catch((error: unknown) => error);
      expect(inWork).to.be.instanceOf(TypeError);
    } finally {
      await sql.close();
      await location.cleanup();
    }
  });
});

describe('the SQL client on an unreachable PostgreSQL', () => {
  it('answers UnavailableError, a dependency failure the consumers retry', async () => {
    const sql = openSqlClient({ dataDir: '/nonexistent', databaseUrl: `postgres://postgres@127.0.0.1:${await unusedLoopbackPort()}/none` });
    try {
      const failure = await sql.all('SELECT 1').catch((error: unknown) => error);
      expect(failure).to.be.instanceOf(UnavailableError);
      expect(isDependencyFailure(failure)).to.equal(true);
    } finally {
      await sql.close();
    }
  });
});
