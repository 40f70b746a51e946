# The bindings app in Python, against the PyPI packages cdk8s, cdk8s-plus-27, constructs and the
# wheel jsii-pacmak built (scripts/bindings-test.sh). The twin of test/bindings/ts/app.ts: its
# output must be byte-identical. The target comes from CDK8S_SIDECARS_KUBERNETES_VERSION, the
# output directory from CDK8S_OUTDIR.
from cdk8s import ApiObjectMetadata, App, Chart, Cron, Duration
import cdk8s_plus_27 as kplus
from cdk8s_sidecars import (
    EnvoyAppProtocol, EnvoyTlsOptions, LogAgent, LogOutput, SecretKeyReference, SecretReference, SidecarCheck,
    SidecarPort, SidecarQuit, WithEnvoy, WithLogAgent, WithSidecar, WithTracer,
)

app = App()
chart = Chart(app, "bindings", namespace="shop")

web = kplus.Deployment(
    chart, "web",
    metadata=ApiObjectMetadata(name="web"),
    containers=[kplus.ContainerProps(name="web", image="ghcr.io/example/web:1.0.0", args=["--listen=127.0.0.1:8080"])],
)
WithLogAgent(
    chart, "logs",
    workload=web,
    agent=LogAgent.fluent_bit(),
    output=LogOutput.loki(host="loki.monitoring.svc", labels={"team": "shop"}),
)
WithTracer(
    chart, "tracer",
    workload=web,
    exporter_endpoint="otel-collector.observability:4317",
    exporter_tls=False,
    exporter_headers={"authorization": SecretKeyReference(secret=SecretReference(name="otel-auth"), key="token")},
    drain_time=Duration.seconds(12),
)
WithEnvoy(
    chart, "envoy",
    workload=web,
    app_port=8080,
    app_protocol=EnvoyAppProtocol.HTTP2,
    tls=EnvoyTlsOptions(secret=SecretReference(name="web-tls")),
)

report = kplus.CronJob(
    chart, "report",
    metadata=ApiObjectMetadata(name="report"),
    schedule=Cron.daily(),
    containers=[kplus.ContainerProps(
        name="report", image="ghcr.io/example/report:1.0.0",
        security_context=kplus.ContainerSecurityContextProps(user=1000, group=1000),
        command=["/bin/sh", "-c", 'run-report; wget -q -O- --post-data= "$PROXY_QUIT_URL"'],
    )],
)
WithSidecar(
    chart, "cloud-sql-proxy",
    workload=report,
    container_name="cloud-sql-proxy",
    image="gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.25.3",
    args=["--port=5432", "--health-check", "--http-address=0.0.0.0", "--quitquitquit", "my-project:europe-west1:reports"],
    ports=[SidecarPort(number=9090, name="proxy-health")],
    local_ports=[5432, 9091],
    startup_check=SidecarCheck.http(9090, path="/startup"),
    job_quit=SidecarQuit.http(9091, "/quitquitquit", "PROXY_QUIT_URL"),
    app_env={"DB_HOST": "127.0.0.1", "DB_PORT": "5432"},
)

app.synth()
