import { ModelCall, ModelUsageRecorder } from '../../../src/llm/model-usage.js';

/** Keeps recorded model calls in memory, for assertions. */
export class MemoryUsageRecorder implements ModelUsageRecorder {
  readonly calls: ModelCall[] = [];

  record(call: ModelCall): void {
    this.calls.push(call);
  }

  get last(): ModelCall | undefined {
    return this.calls[this.calls.length - 1];
  }
}
