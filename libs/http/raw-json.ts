import { randomUUID } from 'node:crypto';

/** A value already serialized as JSON text: placed into a response as it is, never parsed again here. */
export class RawJson {
  constructor(readonly bytes: Buffer) {}
}

/**
 * `JSON.stringify(value)` as bytes, with every RawJson inside it spliced in as its own text: a large
 * payload serialized elsewhere (a worker thread) costs this thread a copy, not a parse and a stringify.
 */
export function jsonWithRaw(value: unknown): Buffer {
  const raws: RawJson[] = [];
  const marker = `raw-json-${randomUUID()}`;
  const text = JSON.stringify(value, (_key, field: unknown) => {
    if (!(field instanceof RawJson)) return field;
    raws.push(field);
    return `${marker}:${raws.length - 1}`;
  });
  if (raws.length === 0) return Buffer.from(text);
  const parts: Buffer[] = [];
  let rest = text;
  raws.forEach((raw, index) => {
    const [before, after] = rest.split(`"${marker}:${index}"`) as [string, string];
    parts.push(Buffer.from(before), raw.bytes);
    rest = after;
  });
  parts.push(Buffer.from(rest));
  return Buffer.concat(parts);
}
