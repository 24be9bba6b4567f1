import { useEffect, useState } from 'preact/hooks';

/** Hash routes (`#/events/evt_1`): every page is a link, and the server serves one document. */
export function currentPath(): string {
  return location.hash.replace(/^#/, '') || '/';
}

export function usePath(): string {
  const [path, setPath] = useState(currentPath());
  useEffect(() => {
    const changed = () => setPath(currentPath());
    addEventListener('hashchange', changed);
    return () => removeEventListener('hashchange', changed);
  }, []);
  return path;
}

export const navigate = (path: string) => {
  location.hash = path;
};

export const href = (path: string) => `#${path}`;
