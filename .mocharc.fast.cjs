// `npm run test:fast`: every suite but the end-to-end ones, for the edit-test loop (about 2.5 minutes), its
// files spread over one worker per core and one more (the suites share nothing: each opens its own database
// and ports). The suites wait on PostgreSQL and sockets enough that the extra worker keeps the cores busy:
// on 2 cores, 152 s with 3 workers against 183 s with 2, in back-to-back runs on 2026-12-01.
// `npm test` (CI) runs everything. Left out here: whole relays and role processes (apps/relay), the
// CLI as a child process, the browser, SIGKILL crash loops and the Kafka broker suites (the mock holds
// every fetch for the consumer's full wait).
module.exports = {
  ...require('./.mocharc.json'),
  parallel: true,
  jobs: Math.max(2, require('node:os').availableParallelism()) + 1,
  spec: ['apps/**/*.spec.ts', 'libs/**/*.spec.ts'],
  ignore: [
    'apps/relay/**',
    'apps/cli/cli.spec.ts',
    'apps/cli/transfer-commands.spec.ts',
    'apps/console/console.spec.ts',
    'libs/broker/embedded/crash.spec.ts',
    'libs/broker/kafka/**',
  ],
};
