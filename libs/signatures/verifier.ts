import type { HeaderMap } from './header-map.js';
import type { SignatureResult } from './signature-result.js';

/** What was received, exactly as it arrived. */
export interface SignedRequest {
  rawBody: Buffer;
  /** Names lower-cased. */
  headers: HeaderMap;
  /** Full URL as the provider called it, path and query included. */
  publicUrl: string;
  nowMs: number;
}

/** Checks one request against one kind of config; answers with a result and never throws on bad input. */
export type Verifier<C> = (config: C, request: SignedRequest) => SignatureResult;
