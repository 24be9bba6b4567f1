import { ApiError } from '../api.js';

/** The API's own message (and the fields it names), never a generic "something went wrong". */
export function ErrorMessage({ error }: { error: unknown }) {
  if (!error) return null;
  const message = error instanceof Error ? error.message : String(error);
  const details = error instanceof ApiError ? error.details : [];
  return (
    <div class="error" role="alert">
      <strong>{error instanceof ApiError && error.code ? `${error.code}: ` : ''}</strong>
      {message}
      {details.length > 0 && (
        <ul>
          {details.map((detail) => (
            <li key={`${detail.field}:${detail.message}`}>{detail.field ? `${detail.field}: ${detail.message}` : detail.message}</li>
          ))}
        </ul>
      )}
    </div>
  );
}
