/**
 * `Images`, the default image of each agent, as public names: declared in the registry
 * (src/agents/registry.ts), beside the log agents whose pins they are.
 */
export { Images } from './agents/registry';
