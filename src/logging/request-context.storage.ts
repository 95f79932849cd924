import { AsyncLocalStorage } from 'node:async_hooks';

/** Carries the request id through async work so every log line of a request can name it. */
export const requestStorage = new AsyncLocalStorage<{ requestId: string }>();

export function currentRequestId(): string | undefined {
  return requestStorage.getStore()?.requestId;
}
