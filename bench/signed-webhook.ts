import { createHash, createHmac } from 'node:crypto';

/** Every bench body's size: a typical webhook. */
export const BODY_BYTES = 1024;

/** Words of a code host's titles, branches and descriptions. */
const WORDS = (
  'fix add update remove refactor bump release merge payment invoice customer order shipping webhook retry ' +
  'timeout error handler config deploy staging production cache index query schema migration token session ' +
  'login user account billing subscription plan trial coupon refund dispute charge balance payout transfer'
).split(' ');

/** 64 KB of those words in a fixed pseudo-random order (xorshift), from which each body takes its own slices. */
const TEXT = (() => {
  let state = 2_463_534_242;
  const words: string[] = [];
  for (let length = 0; length < 65_536; length += words.at(-1)!.length + 1) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    words.push(WORDS[(state >>> 0) % WORDS.length]!);
  }
  return words.join(' ');
})();

let sequence = 0;

/**
 * A 1 KB JSON body no other request carries (neither dedup nor any cache can short-circuit it), and its
 * delivery id. Shaped like a pull request event (titles, branches, logins, commit hashes, URLs, a
 * description in words), because what search indexing costs depends on how varied the text is: a body
 * padded with one repeated letter cost the index about a quarter of what this one does (docs/decisions/0048-sqlite-search-index-layout.md).
 */
export function uniqueWebhookBody(): { delivery: string; body: string } {
  const delivery = `${process.pid}-${++sequence}`;
  return { delivery, body: pullRequestBody(delivery, sequence) };
}

/** A unique body with the headers the code host would sign it with; `delivery` is also its provider id. */
export function signedWebhook(secret: string): { delivery: string; body: string; headers: Record<string, string> } {
  const { delivery, body } = uniqueWebhookBody();
  return {
    delivery,
    body,
    headers: {
      'content-type': 'application/json',
      'x-github-event': 'pull_request',
      'x-github-delivery': delivery,
      'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
    },
  };
}

function pullRequestBody(delivery: string, n: number): string {
  const hash = createHash('sha256').update(delivery).digest('hex');
  const at = (k: number) => (parseInt(hash.slice(k * 8, k * 8 + 8), 16) >>> 0) % (TEXT.length - BODY_BYTES);
  const slice = (k: number, length: number) => TEXT.slice(at(k), at(k) + length).trim();
  const repo = `acme/${slice(0, 12).replace(/ /g, '-')}`;
  const head =
    `{"action":"opened","delivery":"${delivery}","number":${n},"pull_request":{"id":${100_000 + n},"title":"${slice(1, 48)}",` +
    `"html_url":"https://github.com/${repo}/pull/${n}","user":{"login":"${slice(2, 10).replace(/ /g, '-')}-${hash.slice(0, 4)}"},` +
    `"head":{"ref":"feature/${slice(3, 20).replace(/ /g, '-')}","sha":"${hash.slice(0, 40)}"},"base":{"ref":"main","sha":"${hash.slice(24, 64)}"},` +
    `"created_at":"${new Date(1_790_000_000_000 + n * 1000).toISOString()}","body":"`;
  const tail = `"},"repository":{"full_name":"${repo}"}}`;
  return head + TEXT.slice(at(4), at(4) + BODY_BYTES - head.length - tail.length) + tail;
}
