import { useState } from 'preact/hooks';
import type { Page } from '../api.js';
import { useConsole } from '../parts/console-context.js';
import { ErrorMessage } from '../parts/error-message.js';
import { pairMap, SelectField, TextField } from '../parts/fields.js';
import { json, when } from '../parts/format.js';
import { useAction } from '../parts/use-action.js';
import { useLoad } from '../parts/use-load.js';
import type { EventSummary } from './events.js';

/** `POST /api/transformations/test`: a failing code is a 200 with `error` set, never an API error. */
interface TestAnswer {
  result: unknown;
  logs: string[];
  error: { name: string; message: string } | null;
  durationMs: number;
}

const RECENT_EVENTS = 5;

/** A sample body typed as JSON is sent parsed; anything else is the raw text, as a route filter sees it. */
function sampleBody(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Header names as a received request carries them (Node lowers them), so code written against a sample works on events. */
const lowerCaseNames = (headers: Record<string, string>) => Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));

function EventPicker({ eventId, onPick }: { eventId: string; onPick(id: string): void }) {
  const { api } = useConsole();
  const recent = useLoad(() => api.get<Page<EventSummary>>('/events', { pageSize: RECENT_EVENTS }), []);
  return (
    <>
      <TextField label="Event id" value={eventId} onInput={onPick} placeholder="evt_..." />
      <ErrorMessage error={recent.error} />
      {recent.data && recent.data.data.length > 0 && (
        <ul class="picks" aria-label="Recent events">
          {recent.data.data.map((event) => (
            <li key={event.id}>
              <button type="button" class="quiet" aria-pressed={event.id === eventId} onClick={() => onPick(event.id)}>
                <code>{event.id}</code> {when(event.receivedAt)}
              </button>
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

function Outcome({ answer }: { answer: TestAnswer }) {
  return (
    <div class="outcome" aria-label="Test outcome">
      <p role="status">
        {answer.error ? 'The transformation failed' : answer.result === null ? 'The transformation returned null: nothing would be sent' : 'The transformation returned a request'} (ran{' '}
        {answer.durationMs} ms).
      </p>
      {answer.error && (
        <p class="error">
          <strong>{answer.error.name}</strong>: {answer.error.message}
        </p>
      )}
      {answer.result !== null && (
        <pre tabIndex={0} aria-label="Result">
          {json(answer.result)}
        </pre>
      )}
      <h3>Logs</h3>
      {answer.logs.length === 0 ? (
        <p>No console lines.</p>
      ) : (
        <pre tabIndex={0} aria-label="Logs">
          {answer.logs.join('\n')}
        </pre>
      )}
    </div>
  );
}

/** The test panel beside the editor: the code as typed (saved or not) on a stored event or a pasted sample. */
export function TransformationTest({ code, env, transformationId }: { code: string; env: Record<string, string>; transformationId?: string }) {
  const { api } = useConsole();
  const [on, setOn] = useState<'sample' | 'event'>('sample');
  const [eventId, setEventId] = useState('');
  const [sample, setSample] = useState({ body: '{"type": "order.created"}', headers: 'content-type: application/json', query: '', path: '/' });
  const set = (name: keyof typeof sample) => (value: string) => setSample((current) => ({ ...current, [name]: value }));
  const test = useAction(() => {
    const input =
      on === 'event'
        ? { eventId: eventId.trim() }
        : { sample: { body: sampleBody(sample.body), headers: lowerCaseNames(pairMap(sample.headers, ':')), query: pairMap(sample.query, '='), path: sample.path } };
    // With the stored transformation's id, the masked env values shown in the editor run as the stored ones.
    return api.send<TestAnswer>('POST', '/transformations/test', { code, env, transformationId, ...input });
  });
  return (
    <form
      class="panel form"
      aria-label="Test the transformation"
      onSubmit={(event) => {
        event.preventDefault();
        void test.run();
      }}
    >
      <h2>Test</h2>
      <p class="hint">Runs the code as it is in the editor, saved or not; nothing is stored or sent.</p>
      <SelectField<'sample' | 'event'>
        label="Test on"
        value={on}
        options={[
          { value: 'sample' as const, label: 'A pasted sample request' },
          { value: 'event' as const, label: 'A stored event' },
        ]}
        onChange={setOn}
      />
      {on === 'event' ? (
        <EventPicker eventId={eventId} onPick={setEventId} />
      ) : (
        <>
          <TextField label="Sample body (JSON or text)" rows={4} value={sample.body} onInput={set('body')} />
          <TextField label="Sample headers (one Name: value per line)" rows={2} value={sample.headers} onInput={set('headers')} />
          <TextField label="Sample query (one name=value per line)" rows={1} value={sample.query} onInput={set('query')} />
          <TextField label="Sample path" value={sample.path} onInput={set('path')} />
        </>
      )}
      <p class="actions">
        <button type="submit" disabled={test.busy || (on === 'event' && !eventId.trim())}>
          Run test
        </button>
      </p>
      <ErrorMessage error={test.error} />
      {test.result && !test.busy && <Outcome answer={test.result} />}
    </form>
  );
}
