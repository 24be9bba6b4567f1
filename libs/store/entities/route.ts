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
  /** The transformation its deliveries' requests go through (libs/transformations), or null. */
  transformationId: string | null;
  /** Its deliveries are not attempted before the event's receipt plus this. */
  delaySeconds: number;
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
    transformationId: { ...column.ref(true), name: 'transformation_id' },
    delaySeconds: { type: 'int', name: 'delay_seconds', default: 0 },
    createdAt: { ...column.timestamp(), name: 'created_at' },
  },
});
