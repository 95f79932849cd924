import { authorization, problem, type RestApi } from './rest';

export interface UploadedArchive {
  id: string;
  status: string;
}

/**
 * POSTs a legacy archive (a ZIP) to /archives as multipart/form-data, reporting the bytes sent
 * as they go (XMLHttpRequest: fetch cannot tell upload progress). The service checks it whole
 * before it answers; a refused archive rejects with the reason it gives.
 */
export function uploadArchive(
  api: RestApi,
  file: File,
  onProgress: (sent: number, total: number) => void,
): Promise<UploadedArchive> {
  const form = new FormData();
  form.append('file', file, file.name);
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', api.url('/archives'));
    for (const [name, value] of Object.entries(authorization(api))) {
      xhr.setRequestHeader(name, value);
    }
    xhr.upload.onprogress = (e) => onProgress(e.loaded, e.lengthComputable ? e.total : file.size);
    xhr.onload = () => {
      if (xhr.status >= 200 && xhr.status < 300) {
        resolve(JSON.parse(xhr.responseText) as UploadedArchive);
      } else {
        reject(new Error(problem(xhr.responseText, xhr.status)));
      }
    };
    xhr.onerror = () => reject(new Error('The upload stopped: the connection was lost.'));
    xhr.send(form);
  });
}

const STAGES: Record<string, string> = {
  facts: 'facts',
  stories: 'stories and documents',
  conversations: 'conversations',
  turns: 'conversations’ turns',
  memories: 'your memories',
  periodSummaries: 'summaries of weeks, months and years',
  writing: 'the archive’s pages and data',
  storing: 'the finished archive',
};

/** What an archive in progress is doing, in words. */
export function stageLabel(stage: string | null | undefined): string {
  return stage ? (STAGES[stage] ?? stage) : '';
}
