import { useEffect, useMemo, useState } from 'preact/hooks';
import { createApi, type Page } from './api.js';
import { useLoad } from './parts/use-load.js';
import { ConsoleContext } from './parts/console-context.js';
import { keyCanWrite } from './parts/write-scope.js';
import { href, usePath } from './route.js';
import { forgetKey, storedKey, storeKey } from './session.js';
import { SignIn } from './sign-in.js';
import { pageFor } from './pages/page-for.js';

const NAVIGATION = [
  ['Overview', '/'],
  ['Sources', '/sources'],
  ['Destinations', '/destinations'],
  ['Routes', '/routes'],
  ['Transformations', '/transformations'],
  ['Events', '/events'],
  ['Replays', '/replays'],
  ['Issues', '/issues'],
  ['Notifications', '/notifications'],
] as const;

/** How often the navigation's count of open issues is read again. */
const OPEN_ISSUES_POLL_MS = 30_000;

/** The navigation entry a path belongs to: `/events?search=x` to `/events`, an export page to its resource. */
function section(path: string): string {
  const [first, second] = (path.split('?')[0] ?? '').split('/').filter((part) => part !== '');
  return `/${first === 'transfer' ? (second ?? 'sources') : (first ?? '')}`;
}

export function App() {
  const [key, setKey] = useState(storedKey());
  if (!key) {
    return (
      <SignIn
        onSignedIn={(signedIn) => {
          storeKey(signedIn);
          setKey(signedIn);
        }}
      />
    );
  }
  return (
    <SignedIn
      apiKey={key}
      onSignOut={() => {
        forgetKey();
        setKey(null);
      }}
    />
  );
}

function SignedIn({ apiKey, onSignOut }: { apiKey: string; onSignOut(): void }) {
  const api = useMemo(() => createApi(apiKey), [apiKey]);
  // Unknown until the scope probe answers; write controls show only once it says yes.
  const [canWrite, setCanWrite] = useState<boolean | undefined>(undefined);
  useEffect(() => {
    void keyCanWrite(api).then(setCanWrite);
  }, [api]);
  const path = usePath();
  const current = section(path);
  const openIssues = useLoad(() => api.get<Page<unknown>>('/issues', { status: 'open', pageSize: 1 }).then((page) => page.pagination.total), [api]);
  useEffect(() => {
    const timer = setInterval(openIssues.reload, OPEN_ISSUES_POLL_MS);
    return () => clearInterval(timer);
  }, [openIssues.reload]);
  return (
    <ConsoleContext.Provider value={{ api, canWrite: canWrite === true }}>
      <header class="top">
        <span class="brand">Webhook Relay</span>
        <nav aria-label="Console">
          {NAVIGATION.map(([name, target]) => (
            <a key={name} href={href(target)} aria-current={current === target ? 'page' : undefined}>
              {name}
              {target === '/issues' && (openIssues.data ?? 0) > 0 && (
                <span class="count" title="Open issues">
                  {' '}
                  {openIssues.data}
                </span>
              )}
            </a>
          ))}
        </nav>
        {canWrite === false && (
          <span class="badge" role="status">
            Read-only key
          </span>
        )}
        <button type="button" class="quiet" onClick={onSignOut}>
          Sign out
        </button>
      </header>
      <main>{pageFor(path, openIssues.reload)}</main>
    </ConsoleContext.Provider>
  );
}
