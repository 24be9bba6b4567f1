import { EntitySchema } from 'typeorm';
import { column } from '../columns.js';

export interface RouteRow {
  id: string;
  orgId: string;
  sourceId: string;
  destinationId: string;
  enabled: boolean;
  /** A route filter (libs/filters/route-filter.ts), checked before it is stored; null routes every event. */
  filter: Record<string, unknown> | null;
  createdAt: number;
}

export const RouteEntity = new EntitySchema<RouteRow>({
  name: 'Route',
  tableName: 'routes',
  columns: {
    id: column.id(),
    orgId: { ...column.ref(), name: 'org_id' },
    sourceId: { ...column.ref(), name: 'source_id' },
    destinationId: { ...column.ref(), name: 'destination_id' },
    enabled: column.boolean(),
    filter: column.json(true),
    createdAt: { ...column.timestamp(), name: 'created_at' },
  },
});
