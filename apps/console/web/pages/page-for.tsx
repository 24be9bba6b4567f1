import { DestinationPage } from './destination-page.js';
import { DestinationsPage } from './destinations.js';
import { EventPage } from './event-page.js';
import { EventsPage } from './events.js';
import { IssuesPage } from './issues.js';
import { NotificationsPage } from './notifications.js';
import { OverviewPage } from './overview.js';
import { ReplaysPage } from './replays.js';
import { RoutesPage } from './routes.js';
import { SourcePage } from './source-page.js';
import { SourcesPage } from './sources.js';
import { TransferPage } from './transfer.js';
import { TransformationPage } from './transformation-page.js';
import { TransformationsPage } from './transformations.js';

/** `/events/evt_1?x=y` → the page; an unknown path shows the overview's link back. */
export function pageFor(path: string, onIssuesChanged: () => void) {
  const [pathname = '/', search = ''] = path.split('?');
  const [section, id] = pathname.split('/').filter((part) => part !== '');
  const params = new URLSearchParams(search);
  switch (section) {
    case undefined:
      return <OverviewPage />;
    case 'sources':
      return id ? <SourcePage id={id} /> : <SourcesPage />;
    case 'destinations':
      return id ? <DestinationPage id={id} /> : <DestinationsPage />;
    case 'routes':
      return <RoutesPage />;
    case 'transformations':
      return id ? <TransformationPage id={id} /> : <TransformationsPage />;
    case 'events':
      return id ? <EventPage id={id} /> : <EventsPage key={search} params={params} />;
    case 'replays':
      return <ReplaysPage />;
    case 'issues':
      return <IssuesPage onChanged={onIssuesChanged} />;
    case 'notifications':
      return <NotificationsPage />;
    case 'transfer':
      return <TransferPage key={id} kind={id === 'destinations' ? 'destinations' : 'sources'} />;
    default:
      return (
        <section>
          <h1>Not found</h1>
          <p>
            There is no page at <code>{pathname}</code>. <a href="#/">Overview</a>
          </p>
        </section>
      );
  }
}
