import { Injectable } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { ArmCounts, MemoryUpliftRepository } from './memory-uplift.repository.js';
import type {
  MemoryUpliftModel,
  UpliftArmModel,
  UpliftEstimateModel,
} from './models/memory-uplift.model.js';
import { SignalsErrorCode, SignalsException } from './signals.exception.js';
import { Interval, meanDifference, proportionDifference } from './uplift-statistics.js';

const CONFIDENCE = 0.95;

function estimate(
  result: { difference: number; interval: Interval } | null,
  method: string,
  scale = 1,
): UpliftEstimateModel {
  if (!result) return { difference: null, low: null, high: null, significant: false, method };
  const low = result.interval.low * scale;
  const high = result.interval.high * scale;
  return {
    difference: result.difference * scale,
    low,
    high,
    significant: low > 0 || high < 0,
    method,
  };
}

function arm(c: ArmCounts): UpliftArmModel {
  return {
    conversations: c.conversations,
    replies: c.replies,
    repliesReferencingMemory: c.referenced,
    referencedMemoryShare: c.replies > 0 ? c.referenced / c.replies : 0,
    forgotComplaints: c.complaints,
    forgotPer100Turns: c.replies > 0 ? (100 * c.complaints) / c.replies : 0,
    meanConversationTurns: c.meanTurns,
  };
}

/** memoryUplift: the two arms of the memory A/B switch, compared with confidence intervals. */
@Injectable()
export class MemoryUpliftService {
  constructor(
    private readonly repo: MemoryUpliftRepository,
    private readonly config: AppConfig,
  ) {}

  async uplift(from: Date, to: Date): Promise<MemoryUpliftModel> {
    if (!(from < to)) {
      throw new SignalsException(
        SignalsErrorCode.INVALID_PERIOD,
        '`from` must be before `to`.',
        'to',
      );
    }
    const { memory, holdout } = await this.repo.arms(from, to);
    const shares = (c: ArmCounts, k: 'referenced' | 'complaints') => ({
      successes: c[k],
      trials: c.replies,
    });
    return {
      from,
      to,
      holdoutShare: this.config.env.MEMORY_AB_HOLDOUT,
      confidence: CONFIDENCE,
      withMemory: arm(memory),
      holdout: arm(holdout),
      referencedMemory: estimate(
        proportionDifference(shares(memory, 'referenced'), shares(holdout, 'referenced')),
        'Newcombe hybrid score (Wilson)',
      ),
      forgotPer100Turns: estimate(
        proportionDifference(shares(memory, 'complaints'), shares(holdout, 'complaints')),
        'Newcombe hybrid score (Wilson), per 100 turns',
        100,
      ),
      conversationLength: estimate(
        meanDifference(
          { n: memory.conversations, mean: memory.meanTurns, variance: memory.varianceTurns },
          { n: holdout.conversations, mean: holdout.meanTurns, variance: holdout.varianceTurns },
        ),
        'Normal approximation (Welch standard error)',
      ),
    };
  }
}
