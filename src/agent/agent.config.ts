import { defineVariables, oneOf } from '../config/config-spec.js';

export const agentVariables = defineVariables({
  AGENT_REPLY: {
    description:
      "on: sendMessage answers with the agent's streamed reply. off: it only stores the user's turn, for clients that run their own model and store its answer with recordAssistantMessage.",
    default: 'on',
    parse: oneOf('on', 'off'),
  },
});
