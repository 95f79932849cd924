import { Injectable, Logger } from '@nestjs/common';
import type { ReplyTools } from '../llm/language-model.js';
import type { MemoryIntent } from '../memories/memory-intent.js';
import {
  ChatForgetResult,
  ChatTurn,
  MemoryCommandsService,
} from '../memories/memory-commands.service.js';
import { SearchService } from '../search/search.service.js';
import type { MemoryActionRecord } from './assistant-reply.entity.js';
import {
  forgottenText,
  languageOf,
  notSavedText,
  privateCommandText,
  recalledText,
  savedText,
} from './memory-reply-text.js';
import { MEMORY_TOOLS, MemoryToolCall, parseMemoryToolCall } from './memory-tools.js';

/** Recall items a lookup by chat answers with. */
const LOOKUP_ITEMS = 5;

export interface CommandReply {
  text: string;
  actions: MemoryActionRecord[];
}

/** The memory tools of one reply, and what they did once the model has called them. */
export interface MemoryToolSession {
  tools: ReplyTools;
  actions: MemoryActionRecord[];
}

function forgottenAction(result: ChatForgetResult, query: string | null): MemoryActionRecord {
  return {
    action: 'FORGOTTEN',
    memoryIds: result.memories.map((m) => m.id),
    restorableUntil: result.restorableUntil?.toISOString() ?? null,
    reason: null,
    query,
  };
}

/**
 * Memory by chat: "remember that ...", "forget what I said about ...", "what do you remember
 * about ...?", carried out for the user on their own memories only, either from the parser's
 * intent (no language model) or from the model's tool calls. Every action is recorded so the
 * reply can say what was done and a client can offer "Undo".
 */
@Injectable()
export class ChatMemoryService {
  private readonly logger = new Logger('Agent');

  constructor(
    private readonly commands: MemoryCommandsService,
    private readonly search: SearchService,
  ) {}

  /** Carries out a command the parser recognised and says what was done. */
  async runIntent(turn: ChatTurn, intent: MemoryIntent): Promise<CommandReply> {
    const reply = await this.carryOut(turn, intent);
    if (!turn.together) return reply;
    const lang = languageOf(turn.message.content);
    const done = reply.actions[0];
    const text =
      done?.action === 'SAVED'
        ? privateCommandText(lang, 'SAVED', 1)
        : done?.action === 'FORGOTTEN'
          ? privateCommandText(lang, 'FORGOTTEN', done.memoryIds.length)
          : intent.kind === 'LOOKUP'
            ? privateCommandText(lang, 'LOOKUP', 0)
            : reply.text;
    return { ...reply, text };
  }

  private async carryOut(turn: ChatTurn, intent: MemoryIntent): Promise<CommandReply> {
    const lang = languageOf(turn.message.content);
    switch (intent.kind) {
      case 'SAVE': {
        const saved = await this.commands.save(turn, intent.content);
        if (!saved.saved) {
          return {
            text: notSavedText(lang, saved.reason, saved.message),
            actions: [notSavedAction(saved.reason)],
          };
        }
        return {
          text: savedText(lang, saved.result),
          actions: [savedAction(saved.result.memory.id)],
        };
      }
      case 'FORGET': {
        const result = await this.commands.forgetAbout(turn, intent.query);
        return {
          text: forgottenText(lang, result.memories, result.restorableUntil, intent.query),
          actions: [forgottenAction(result, intent.query)],
        };
      }
      case 'FORGET_LAST': {
        const result = await this.commands.forgetPreviousTurn(turn);
        return {
          text: forgottenText(lang, result.memories, result.restorableUntil, null),
          actions: [forgottenAction(result, null)],
        };
      }
      case 'LOOKUP': {
        const items = await this.recall(turn, intent.query);
        return {
          text: recalledText(lang, intent.query, items),
          actions: [lookedUpAction(intent.query, items)],
        };
      }
    }
  }

  /** The memory tools offered to the model for this turn. */
  toolsFor(turn: ChatTurn): MemoryToolSession {
    const actions: MemoryActionRecord[] = [];
    const tools: ReplyTools = {
      definitions: MEMORY_TOOLS,
      execute: async (name, argumentsJson) => {
        const parsed = parseMemoryToolCall(name, argumentsJson);
        if (!parsed.ok) return JSON.stringify({ error: parsed.error });
        try {
          const { result, action } = await this.runTool(turn, parsed.call);
          actions.push(action);
          return JSON.stringify(result);
        } catch (err) {
          // The model is told, so that its reply can say so; the rest of the reply goes on.
          this.logger.error({
            msg: 'memory tool failed',
            tool: name,
            conversationId: turn.conversation.id,
            error: (err as Error).message,
          });
          return JSON.stringify({ error: 'This could not be carried out just now.' });
        }
      },
    };
    return { tools, actions };
  }

  private async runTool(
    turn: ChatTurn,
    call: MemoryToolCall,
  ): Promise<{ result: unknown; action: MemoryActionRecord }> {
    switch (call.name) {
      case 'memory_save': {
        const saved = await this.commands.save(turn, call.content);
        if (!saved.saved) {
          return {
            result: { saved: false, reason: saved.reason, message: saved.message },
            action: notSavedAction(saved.reason),
          };
        }
        const { memory, outcome } = saved.result;
        return {
          result: { saved: true, outcome, memory: { id: memory.id, content: memory.content } },
          action: savedAction(memory.id),
        };
      }
      case 'memory_forget': {
        const result = call.previousTurn
          ? await this.commands.forgetPreviousTurn(turn)
          : call.query !== null
            ? await this.commands.forgetAbout(turn, call.query)
            : await this.forgetIds(turn, call.memoryIds);
        return {
          result: {
            forgotten: result.memories.map((m) => ({ id: m.id, content: m.content })),
            restorableUntil: result.restorableUntil?.toISOString() ?? null,
            note:
              result.memories.length === 0
                ? 'Nothing matched, so nothing was forgotten.'
                : 'Tell the user which memories were forgotten and that they can be restored until restorableUntil.',
          },
          action: forgottenAction(result, call.query),
        };
      }
      case 'memory_lookup': {
        const items = await this.recall(turn, call.query);
        return {
          result: {
            items: items.map((i) => ({ id: i.sourceId, sourceType: i.sourceType, text: i.text })),
          },
          action: lookedUpAction(call.query, items),
        };
      }
    }
  }

  private async forgetIds(turn: ChatTurn, ids: string[]): Promise<ChatForgetResult> {
    await this.commands.markTurnAsCommand(turn);
    return this.commands.forgetIds(turn.user, ids);
  }

  private async recall(turn: ChatTurn, query: string) {
    const hits = await this.search.recall(
      turn.user,
      turn.conversation.legacyId,
      query,
      LOOKUP_ITEMS,
    );
    return hits.map((h) => h.item);
  }
}

function savedAction(memoryId: string): MemoryActionRecord {
  return {
    action: 'SAVED',
    memoryIds: [memoryId],
    restorableUntil: null,
    reason: null,
    query: null,
  };
}

function notSavedAction(reason: string): MemoryActionRecord {
  return { action: 'NOT_SAVED', memoryIds: [], restorableUntil: null, reason, query: null };
}

function lookedUpAction(
  query: string,
  items: { sourceType: string; sourceId: string }[],
): MemoryActionRecord {
  return {
    action: 'LOOKED_UP',
    memoryIds: items.filter((i) => i.sourceType === 'MEMORY').map((i) => i.sourceId),
    restorableUntil: null,
    reason: null,
    query,
  };
}
