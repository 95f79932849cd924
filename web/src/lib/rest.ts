import { createContext, useContext } from 'react';

/**
 * The service's two HTTP routes besides GraphQL (uploading a document, downloading a story's
 * file), authenticated as the GraphQL client is: the session's bearer token while the page holds
 * one, and the cookies the browser sends to its own origin in any case.
 */
export interface RestApi {
  /** Empty when the page holds no token (the session cookie then authenticates). */
  token: string;
  /** An absolute URL for a path of the service (`/legacies/…/documents`). */
  url(path: string): string;
}

export const RestContext = createContext<RestApi | null>(null);

export function restApi(graphqlPath: string, token: string): RestApi {
  const graphql = new URL(graphqlPath, location.href);
  return { token, url: (path) => new URL(path, graphql).href };
}

export function authorization(api: RestApi): Record<string, string> {
  return api.token ? { authorization: `Bearer ${api.token}` } : {};
}

export function useRest(): RestApi {
  const api = useContext(RestContext);
  if (!api) throw new Error('useRest outside a signed-in session');
  return api;
}

/** The message of an error answer of these routes ({ errors: [{ message }] }), or a fallback. */
export function problem(body: string, status: number): string {
  try {
    const parsed = JSON.parse(body) as { errors?: { message?: string }[] };
    const message = parsed.errors?.[0]?.message;
    if (message) return message;
  } catch {
    // Not JSON (a proxy's page): the status says enough.
  }
  return `The service refused the file (HTTP ${status}).`;
}

export interface UploadedStory {
  id: string;
  title: string;
}

/**
 * POSTs a file as multipart/form-data, reporting the bytes sent as they go (fetch cannot tell
 * upload progress; XMLHttpRequest can). Rejects with the reason the service gives.
 */
export function uploadDocument(
  api: RestApi,
  legacyId: string,
  file: File,
  fields: Record<string, string>,
  onProgress: (sent: number, total: number) => void,
): Promise<UploadedStory> {
  const form = new FormData();
  form.append('file', file, file.name);
  for (const [key, value] of Object.entries(fields)) form.append(key, value);
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', api.url(`/legacies/${encodeURIComponent(legacyId)}/documents`));
    for (const [name, value] of Object.entries(authorization(api))) {
      xhr.setRequestHeader(name, value);
    }
    xhr.upload.onprogress = (e) => onProgress(e.loaded, e.lengthComputable ? e.total : file.size);
    xhr.onload = () => {
      if (xhr.status >= 200 && xhr.status < 300) {
        resolve(JSON.parse(xhr.responseText) as UploadedStory);
      } else {
        reject(new Error(problem(xhr.responseText, xhr.status)));
      }
    };
    xhr.onerror = () => reject(new Error('The upload stopped: the connection was lost.'));
    xhr.send(form);
  });
}

/** Downloads a story's original file (the route needs the bearer token, so no plain link). */
export async function downloadFile(api: RestApi, path: string, fallbackName: string) {
  const res = await fetch(api.url(path), { headers: authorization(api) });
  if (!res.ok) throw new Error(problem(await res.text(), res.status));
  const disposition = res.headers.get('content-disposition') ?? '';
  const named = /filename\*=UTF-8''([^;]+)/.exec(disposition);
  const url = URL.createObjectURL(await res.blob());
  const link = document.createElement('a');
  link.href = url;
  link.download = named ? decodeURIComponent(named[1]) : fallbackName;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
