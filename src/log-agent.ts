/**
 * `LogAgent`, the log shipper of `WithLogAgent`: the class and its factories are the registry's
 * (src/agents/registry.ts), each agent is a folder of src/agents/.
 */
export { LogAgent } from './agents/registry';
export { AgentSources, LogAgentContext, LogAgentRendering } from './agents/log-agent-spec';
