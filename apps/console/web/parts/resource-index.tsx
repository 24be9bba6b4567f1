import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import type { Page } from '../api.js';
import { href, navigate } from '../route.js';
import { useConsole } from './console-context.js';
import { ErrorMessage } from './error-message.js';
import { Pager } from './pager.js';
import { useAction } from './use-action.js';
import { useLoad } from './use-load.js';

export interface CreateForm {
  busy: boolean;
  onSubmit(body: object): void;
}

/**
 * The list page of sources or destinations: a "New" panel whose form creates through POST and opens
 * the created resource, the export and import link, and the paged table.
 */
export function ResourceIndex<T extends { id: string }>(props: {
  title: string;
  /** The API collection and the console path alike: `/sources`. */
  path: string;
  noun: string;
  renderForm(form: CreateForm): ComponentChildren;
  renderTable(rows: T[]): ComponentChildren;
}) {
  const { api, canWrite } = useConsole();
  const [page, setPage] = useState(1);
  const [creating, setCreating] = useState(false);
  const list = useLoad(() => api.get<Page<T>>(props.path, { page, pageSize: 50 }), [page]);
  const create = useAction(async (body: object) => {
    const created = await api.send<T>('POST', props.path, body);
    navigate(`${props.path}/${created.id}`);
  });
  return (
    <section>
      <h1>{props.title}</h1>
      <p class="actions">
        {canWrite && (
          <button type="button" onClick={() => setCreating(!creating)} aria-expanded={creating}>
            New {props.noun}
          </button>
        )}
        <a href={href(`/transfer${props.path}`)}>Export and import {props.title.toLowerCase()}</a>
      </p>
      {creating && (
        <div class="panel">
          <h2>New {props.noun}</h2>
          {props.renderForm({ busy: create.busy, onSubmit: create.run })}
          <ErrorMessage error={create.error} />
        </div>
      )}
      <ErrorMessage error={list.error} />
      {list.data && (
        <>
          {props.renderTable(list.data.data)}
          <Pager pagination={list.data.pagination} rows={list.data.data.length} noun={props.title.toLowerCase()} onPage={setPage} />
        </>
      )}
    </section>
  );
}
