package bindings;

import java.util.List;

import org.cdk8s.App;
import org.cdk8s.Chart;
import org.cdk8s.plus27.ContainerProps;
import org.cdk8s.plus27.Deployment;
import org.cdk8s.plus27.DeploymentProps;

import dev.cdk8s.sidecars.LogOutput;
import dev.cdk8s.sidecars.LokiOutputOptions;
import dev.cdk8s.sidecars.SidecarTargetOptions;
import dev.cdk8s.sidecars.Sidecars;
import dev.cdk8s.sidecars.WithLogAgent;

public final class QuickStart {
    public static void main(final String[] args) {
        App app = new App();
        // the LOWEST version of API server and nodes
        Sidecars.configure(app, SidecarTargetOptions.builder().kubernetesVersion("1.29").build());
        Chart chart = new Chart(app, "shop");
        Deployment web = new Deployment(chart, "web", DeploymentProps.builder()
                .containers(List.of(ContainerProps.builder()
                        .name("app").image("ghcr.io/example/shop-web:1.4.2").portNumber(8080).build()))
                .build());
        WithLogAgent.Builder.create(chart, "logs")
                .workload(web)
                .output(LogOutput.loki(LokiOutputOptions.builder().host("loki.monitoring.svc").build()))
                .build();
        app.synth();
    }
}
