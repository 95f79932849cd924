import { ConfigOf, defineVariables, oneOf } from '../config/config-spec.js';

export const agentVariables = defineVariables({
  AGENT_REPLY: {
    description:
      "on: sendMessage answers with the agent's streamed reply. off: it only stores the user's turn, for clients that run their own model and store its answer with recordAssistantMessage.",
    default: 'on',
    parse: oneOf('on', 'off'),
  },
  AGENT_MEMORY_TOOLS: {
    description:
      'on: a language model that replies is offered the memory_save, memory_forget and memory_lookup tools (memory by chat). off: for servers or models without tool calling; memory commands are then recognised by patterns, as they are without a language model.',
    default: 'on',
    parse: oneOf('on', 'off'),
  },
});

declare module '../config/app-config.js' {
  interface Env extends ConfigOf<typeof agentVariables> {}
}
