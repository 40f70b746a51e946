// The bindings app in Java, against org.cdk8s:cdk8s, org.cdk8s:cdk8s-plus-27, software.constructs
// and the jar jsii-pacmak built (scripts/bindings-test.sh). The twin of test/bindings/ts/app.ts:
// its output must be byte-identical. The target comes from CDK8S_SIDECARS_KUBERNETES_VERSION, the
// output directory from CDK8S_OUTDIR.
package bindings;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.cdk8s.ApiObjectMetadata;
import org.cdk8s.Chart;
import org.cdk8s.ChartProps;
import org.cdk8s.Cron;
import org.cdk8s.Duration;
import org.cdk8s.plus27.ContainerProps;
import org.cdk8s.plus27.ContainerSecurityContextProps;
import org.cdk8s.plus27.CronJob;
import org.cdk8s.plus27.CronJobProps;
import org.cdk8s.plus27.Deployment;
import org.cdk8s.plus27.DeploymentProps;

import dev.cdk8s.sidecars.EnvoyAppProtocol;
import dev.cdk8s.sidecars.EnvoyTlsOptions;
import dev.cdk8s.sidecars.LogAgent;
import dev.cdk8s.sidecars.LogOutput;
import dev.cdk8s.sidecars.LokiOutputOptions;
import dev.cdk8s.sidecars.SecretKeyReference;
import dev.cdk8s.sidecars.SecretReference;
import dev.cdk8s.sidecars.SidecarCheck;
import dev.cdk8s.sidecars.SidecarHttpCheckOptions;
import dev.cdk8s.sidecars.SidecarPort;
import dev.cdk8s.sidecars.SidecarQuit;
import dev.cdk8s.sidecars.WithEnvoy;
import dev.cdk8s.sidecars.WithLogAgent;
import dev.cdk8s.sidecars.WithSidecar;
import dev.cdk8s.sidecars.WithTracer;

public final class App {
    public static void main(final String[] args) {
        org.cdk8s.App app = new org.cdk8s.App();
        Chart chart = new Chart(app, "bindings", ChartProps.builder().namespace("shop").build());

        Deployment web = new Deployment(chart, "web", DeploymentProps.builder()
                .metadata(ApiObjectMetadata.builder().name("web").build())
                .containers(List.of(ContainerProps.builder()
                        .name("web").image("ghcr.io/example/web:1.0.0").args(List.of("--listen=127.0.0.1:8080")).build()))
                .build());
        WithLogAgent.Builder.create(chart, "logs")
                .workload(web)
                .agent(LogAgent.fluentBit())
                .output(LogOutput.loki(LokiOutputOptions.builder().host("loki.monitoring.svc").labels(Map.of("team", "shop")).build()))
                .build();
        WithTracer.Builder.create(chart, "tracer")
                .workload(web)
                .exporterEndpoint("otel-collector.observability:4317")
                .exporterTls(false)
                .exporterHeaders(Map.of("authorization", SecretKeyReference.builder()
                        .secret(SecretReference.builder().name("otel-auth").build()).key("token").build()))
                .drainTime(Duration.seconds(12))
                .build();
        WithEnvoy.Builder.create(chart, "envoy")
                .workload(web)
                .appPort(8080)
                .appProtocol(EnvoyAppProtocol.HTTP2)
                .tls(EnvoyTlsOptions.builder().secret(SecretReference.builder().name("web-tls").build()).build())
                .build();

        CronJob report = new CronJob(chart, "report", CronJobProps.builder()
                .metadata(ApiObjectMetadata.builder().name("report").build())
                .schedule(Cron.daily())
                .containers(List.of(ContainerProps.builder()
                        .name("report").image("ghcr.io/example/report:1.0.0")
                        .securityContext(ContainerSecurityContextProps.builder().user(1000).group(1000).build())
                        .command(List.of("/bin/sh", "-c", "run-report; wget -q -O- --post-data= \"$PROXY_QUIT_URL\""))
                        .build()))
                .build());
        // A LinkedHashMap, not Map.of: the order of appEnv is the order of the env entries.
        Map<String, String> appEnv = new LinkedHashMap<>();
        appEnv.put("DB_HOST", "127.0.0.1");
        appEnv.put("DB_PORT", "5432");
        WithSidecar.Builder.create(chart, "cloud-sql-proxy")
                .workload(report)
                .containerName("cloud-sql-proxy")
                .image("gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.25.3")
                .args(List.of("--port=5432", "--health-check", "--http-address=0.0.0.0", "--quitquitquit", "my-project:europe-west1:reports"))
                .ports(List.of(SidecarPort.builder().number(9090).name("proxy-health").build()))
                .localPorts(List.of(5432, 9091))
                .startupCheck(SidecarCheck.http(9090, SidecarHttpCheckOptions.builder().path("/startup").build()))
                .jobQuit(SidecarQuit.http(9091, "/quitquitquit", "PROXY_QUIT_URL"))
                .appEnv(appEnv)
                .build();

        app.synth();
    }
}
