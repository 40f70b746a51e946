/**
 * The WithEnvoy variants that cover every part of Envoy's API the library emits: the proto check
 * (test/envoy-api.test.ts) and the real Envoy (test/agents/envoy.agent-test.ts) both run them.
 */
import { Duration } from 'cdk8s';
import { EnvoyAppProtocol, WithEnvoyProps } from '../../src';

export const ENVOY_VARIANTS: Array<[string, Partial<WithEnvoyProps>]> = [
  ['defaults', {}],
  ['inbound mTLS', { tls: { secret: { name: 'web-tls' }, clientCaSecret: { name: 'web-client-ca' } } }],
  ['HTTP/2 app', { appProtocol: EnvoyAppProtocol.HTTP2 }],
  ['upstreams, one with TLS', {
    upstreams: [
      { name: 'payments', localPort: 9001, host: 'payments.shop.svc.cluster.local', port: 8080 },
      { name: 'partner-api', localPort: 9002, host: 'api.partner.example.com', tls: true },
    ],
  }],
  ['no access log, proxy hops, timeouts, concurrency', {
    accessLog: false, trustedProxyHops: 1, streamIdleTimeout: Duration.seconds(100), appIdleTimeout: Duration.seconds(30), concurrency: 2,
  }],
  ['app on the pod IP', { appListensOnPodIp: true }],
];
