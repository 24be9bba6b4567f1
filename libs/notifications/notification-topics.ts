/** What a notification channel can subscribe to. */
export const NOTIFICATION_TOPICS = ['issue.opened', 'issue.reopened', 'issue.resolved', 'destination.disabled', 'destination.auto_disable_warning'] as const;
export type NotificationTopic = (typeof NOTIFICATION_TOPICS)[number];

/** What a channel receives: `type` is a topic, or `test` from the channel's test endpoint. */
export interface NotificationBody {
  type: NotificationTopic | 'test';
  createdAt: string;
  data: unknown;
}
