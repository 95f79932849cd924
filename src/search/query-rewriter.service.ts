import { Inject, Injectable, Logger } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { AppConfig } from '../config/app-config.js';
import { LegaciesService } from '../legacies/legacies.service.js';
import { LANGUAGE_MODEL } from '../llm/language-model.js';
import type { LanguageModel, QueryRewrite } from '../llm/language-model.js';
import { RateLimitService } from '../rate-limit/rate-limit.service.js';

/**
 * SEARCH_QUERY_REWRITE: a recall question rewritten by the language model (a hypothetical
 * answer, sub-questions) before it is searched. Anything that goes wrong (no budget left, a
 * slow or failing model, an invalid answer) leaves the question as it was: recall never fails
 * or waits long because of it.
 */
@Injectable()
export class QueryRewriterService {
  private readonly logger = new Logger('QueryRewrite');

  constructor(
    @Inject(LANGUAGE_MODEL) private readonly llm: LanguageModel,
    private readonly limits: RateLimitService,
    private readonly legacies: LegaciesService,
    private readonly config: AppConfig,
  ) {}

  get enabled(): boolean {
    return this.config.env.SEARCH_QUERY_REWRITE === 'on' && this.llm.rewriteQuery !== undefined;
  }

  async rewrite(userId: string, legacyId: string, question: string): Promise<QueryRewrite | null> {
    if (!this.enabled) return null;
    // The member's model budget is shared with replies and summaries; when it is spent the
    // question is searched as it is rather than refused.
    if ((await this.limits.backgroundModelCall(userId)) > 0) return null;
    const legacy = await this.legacies.findForMember(userId, legacyId);
    if (!legacy) return null;
    const timeout = new AbortController();
    const call = this.llm.rewriteQuery!({ question, legacyName: legacy.name });
    try {
      const result = await Promise.race([
        call,
        sleep(this.config.env.SEARCH_QUERY_REWRITE_TIMEOUT_MS, null, { signal: timeout.signal }),
      ]);
      if (!result) {
        this.logger.warn({ msg: 'query rewrite timed out', legacyId });
        // Its outcome no longer matters, but a rejection must not go unhandled.
        call.catch(() => undefined);
        return null;
      }
      return { answer: result.answer, subQuestions: result.subQuestions };
    } catch (err) {
      this.logger.warn({ msg: 'query rewrite failed', legacyId, error: String(err) });
      return null;
    } finally {
      timeout.abort();
    }
  }
}
