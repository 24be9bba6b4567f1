import Router from '@koa/router';

/** `/healthz`: the process answers. `/readyz`: its dependencies (store, broker) answer too. */
export function probeRouter(ready: () => Promise<void>): Router {
  const probes = new Router();
  probes.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  probes.get('/readyz', async (ctx) => {
    await ready();
    ctx.body = { status: 'ready' };
  });
  return probes;
}
