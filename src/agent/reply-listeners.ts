import { Injectable } from '@nestjs/common';

/**
 * Who is listening, in this process, to each conversation's reply stream
 * (assistantReplyDelta): a reply that nobody waits for any more can stop being generated.
 */
@Injectable()
export class ReplyListeners {
  private readonly counts = new Map<string, number>();

  /** Counts one listener until the returned function is called (once). */
  watch(conversationId: string): () => void {
    this.counts.set(conversationId, (this.counts.get(conversationId) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.counts.get(conversationId) ?? 1) - 1;
      if (left > 0) this.counts.set(conversationId, left);
      else this.counts.delete(conversationId);
    };
  }

  has(conversationId: string): boolean {
    return (this.counts.get(conversationId) ?? 0) > 0;
  }
}

/** Yields what `source` yields and calls `release` once it ends, however it ends. */
export async function* releasing<T>(
  source: AsyncIterable<T>,
  release: () => void,
): AsyncGenerator<T> {
  try {
    yield* source;
  } finally {
    release();
  }
}
