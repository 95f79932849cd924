import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  Module,
  OnApplicationShutdown,
  OnModuleInit,
  Optional,
} from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config.js';
import { ScheduledTasksService } from '../jobs/scheduled-tasks.service.js';
import { existsSync } from 'node:fs';
import { basename } from 'node:path';
import { DatabaseUsageRecorder } from './database-usage.recorder.js';
import { EmbeddedLanguageModel } from './embedded-llm.provider.js';
import { ggufFolder, verifiedGguf } from './gguf-files.js';
import { INSTRUCT_MODELS, instructModel } from './instruct-models.js';
import { EMBEDDER } from './embedder.js';
import type { Embedder } from './embedder.js';
import { LANGUAGE_MODEL } from './language-model.js';
import type { LanguageModel } from './language-model.js';
import { LocalEmbedder } from './local-embedder.provider.js';
import { LocalLanguageModel } from './local-llm.provider.js';
import {
  cacheFolder,
  defaultModelsDir,
  folderProblems,
  sha256File,
  verifiedFiles,
} from './model-files.js';
import { sentenceModel } from './sentence-models.js';
import { LoggingUsageRecorder, MODEL_USAGE_RECORDER } from './model-usage.js';
import type { ModelUsageRecorder } from './model-usage.js';
import { LlmEnv, validateLlmConfig } from './llm.config.js';
import { ServiceMetrics } from '../metrics/service-metrics.js';
import { OpenAiEmbedder } from './openai-embedder.provider.js';
import { OpenAiLanguageModel } from './openai-llm.provider.js';
import { MAX_BACKOFF_MS, MAX_RETRY_AFTER_MS } from './openai-transport.js';
import { RetryPolicy } from './retry.js';

function retryPolicy(env: LlmEnv): RetryPolicy {
  return {
    maxRetries: env.MODEL_MAX_RETRIES,
    baseMs: env.MODEL_RETRY_BASE_MS,
    maxDelayMs: MAX_BACKOFF_MS,
    maxRetryAfterMs: MAX_RETRY_AFTER_MS,
  };
}

function assertValid(env: LlmEnv): void {
  const problems = validateLlmConfig(env);
  if (problems.length > 0) throw new Error(`Invalid model configuration: ${problems.join('; ')}`);
}

/**
 * The local encoder EMBEDDINGS_LOCAL_MODEL names, from EMBEDDINGS_MODEL_DIR (which must hold its
 * pinned files) or from the MODELS_DIR cache; a fetched model that is not in the cache yet gives
 * way to USE-lite, said once in the log and kept as the embedder's notice (/health/ready).
 */
export async function createLocalEmbedder(env: LlmEnv): Promise<LocalEmbedder> {
  const model = sentenceModel(env.EMBEDDINGS_LOCAL_MODEL);
  if (!model) return new LocalEmbedder();
  const threads = env.EMBEDDINGS_THREADS;
  if (env.EMBEDDINGS_MODEL_DIR) {
    const problems = await folderProblems(env.EMBEDDINGS_MODEL_DIR, model);
    if (problems.length > 0) {
      throw new Error(`EMBEDDINGS_MODEL_DIR cannot serve ${model.name}: ${problems.join('; ')}`);
    }
    const paths = (await verifiedFiles(env.EMBEDDINGS_MODEL_DIR, model))!;
    return new LocalEmbedder({ onnx: { model, paths, threads } });
  }
  const modelsDir = env.MODELS_DIR ?? defaultModelsDir();
  const paths = await verifiedFiles(cacheFolder(modelsDir, model), model);
  if (paths) return new LocalEmbedder({ onnx: { model, paths, threads } });
  const notice =
    `${model.name} is not in ${modelsDir} (run \`npm run models:fetch\`): ` +
    `embedding with Universal Sentence Encoder lite instead`;
  new Logger('Embeddings').warn(notice);
  return new LocalEmbedder({ notice });
}

/** The embedder EMBEDDINGS selects. Usable without Nest (benchmarks, scripts). */
export async function createEmbedder(
  config: AppConfig,
  recorder: ModelUsageRecorder,
): Promise<Embedder> {
  const env = config.env;
  if (env.EMBEDDINGS === 'local') return createLocalEmbedder(env);
  assertValid(env);
  return new OpenAiEmbedder(
    {
      baseURL: env.EMBEDDINGS_BASE_URL,
      apiKey: env.EMBEDDINGS_API_KEY,
      model: env.EMBEDDINGS_MODEL as string,
      dimensions: env.EMBEDDINGS_DIMENSIONS as number,
      batchSize: env.EMBEDDINGS_BATCH_SIZE,
      timeoutMs: env.MODEL_TIMEOUT_MS,
      retry: retryPolicy(env),
    },
    recorder,
  );
}

/**
 * The GGUF file LLM=embedded runs: EMBEDDED_LLM_MODEL_PATH as it is (its SHA-256 read now and
 * named in the model id), or EMBEDDED_LLM_MODEL from the MODELS_DIR cache, checked against its
 * pin. A model that is not there stops the boot with what to run: LLM=embedded was asked for.
 */
export async function embeddedModelFile(
  env: LlmEnv,
): Promise<{ path: string; modelId: string; label: string }> {
  if (env.EMBEDDED_LLM_MODEL_PATH) {
    const path = env.EMBEDDED_LLM_MODEL_PATH;
    if (!existsSync(path)) throw new Error(`EMBEDDED_LLM_MODEL_PATH: ${path} does not exist`);
    const sha = await sha256File(path);
    const known = Object.values(INSTRUCT_MODELS).find((m) => m.file.sha256 === sha);
    const name = known?.name ?? basename(path).replace(/\.gguf$/i, '');
    return { path, modelId: `embedded:${name}-${sha.slice(0, 8)}`, label: known?.label ?? name };
  }
  const model = instructModel(env.EMBEDDED_LLM_MODEL)!;
  const modelsDir = env.MODELS_DIR ?? defaultModelsDir();
  const path = await verifiedGguf(ggufFolder(modelsDir, model), model);
  if (!path) {
    throw new Error(
      `LLM=embedded: ${model.name} is not in ${modelsDir}; run \`npm run models:fetch -- --llm ${model.name}\` or set EMBEDDED_LLM_MODEL_PATH`,
    );
  }
  return {
    path,
    modelId: `embedded:${model.name}-${model.file.sha256.slice(0, 8)}`,
    label: model.label,
  };
}

/** The language model LLM selects. Usable without Nest (benchmarks, scripts). */
export async function createLanguageModel(
  config: AppConfig,
  recorder: ModelUsageRecorder,
): Promise<LanguageModel> {
  const env = config.env;
  if (env.LLM === 'local') return new LocalLanguageModel(recorder);
  if (env.LLM === 'embedded') {
    const file = await embeddedModelFile(env);
    return new EmbeddedLanguageModel(
      {
        modelPath: file.path,
        modelId: file.modelId,
        label: file.label,
        threads: env.EMBEDDED_LLM_THREADS,
        contextSize: env.EMBEDDED_LLM_CONTEXT_SIZE,
        replyMaxTokens: env.LLM_REPLY_MAX_TOKENS,
      },
      recorder,
    );
  }
  assertValid(env);
  return new OpenAiLanguageModel(
    {
      baseURL: env.LLM_BASE_URL,
      apiKey: env.LLM_API_KEY,
      model: env.LLM_MODEL as string,
      structuredOutput: env.LLM_STRUCTURED_OUTPUT,
      timeoutMs: env.MODEL_TIMEOUT_MS,
      retry: retryPolicy(env),
      replyMaxTokens: env.LLM_REPLY_MAX_TOKENS,
    },
    recorder,
  );
}

@Injectable()
class LlmLifecycle implements OnModuleInit, BeforeApplicationShutdown, OnApplicationShutdown {
  constructor(
    @Inject(EMBEDDER) private readonly embedder: Embedder,
    @Inject(LANGUAGE_MODEL) private readonly llm: LanguageModel,
    @Inject(MODEL_USAGE_RECORDER) private readonly recorder: ModelUsageRecorder,
    private readonly config: AppConfig,
    @Optional() private readonly tasks?: ScheduledTasksService,
  ) {}

  onModuleInit(): void {
    // Loaded while the service starts, so the first reply does not wait for it (and a file
    // that is no model says so in the log at once); a failure leaves later calls to try again.
    if (this.llm instanceof EmbeddedLanguageModel) {
      this.llm.warmUp().catch((err: Error) => new Logger('Llm').error(err.message));
    }
    const recorder = this.recorder;
    if (!(recorder instanceof DatabaseUsageRecorder) || !this.tasks) return;
    this.tasks.register('model-calls-prune', '29 3 * * *', async () => {
      const days = this.config.env.MODEL_CALLS_RETENTION_DAYS;
      await recorder.deleteBefore(new Date(Date.now() - days * 86_400_000));
    });
  }

  // Before the database closes (DatabaseModule closes it on application shutdown).
  async beforeApplicationShutdown(): Promise<void> {
    if (this.recorder instanceof DatabaseUsageRecorder) await this.recorder.flush();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.embedder.close?.();
    if (this.llm instanceof EmbeddedLanguageModel) await this.llm.close();
  }
}

/**
 * EMBEDDER, LANGUAGE_MODEL and MODEL_USAGE_RECORDER, chosen from AppConfig. Usage goes to the
 * `model_calls` table when a DataSource is available, to the debug log otherwise.
 */
@Module({
  providers: [
    {
      provide: MODEL_USAGE_RECORDER,
      inject: [
        { token: DataSource, optional: true },
        { token: ServiceMetrics, optional: true },
      ],
      useFactory: (dataSource?: DataSource, metrics?: ServiceMetrics): ModelUsageRecorder =>
        dataSource
          ? new DatabaseUsageRecorder(dataSource, metrics && ((call) => metrics.modelCall(call)))
          : new LoggingUsageRecorder(),
    },
    { provide: EMBEDDER, inject: [AppConfig, MODEL_USAGE_RECORDER], useFactory: createEmbedder },
    {
      provide: LANGUAGE_MODEL,
      inject: [AppConfig, MODEL_USAGE_RECORDER],
      useFactory: createLanguageModel,
    },
    LlmLifecycle,
  ],
  exports: [EMBEDDER, LANGUAGE_MODEL, MODEL_USAGE_RECORDER],
})
export class LlmModule {}
