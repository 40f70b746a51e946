export * from './target';
export * from './settings';
export * from './sidecar';
export * from './log-output';
export * from './log-agent';
export * from './with-log-agent';
export * from './with-tracer';
export * from './validation';
