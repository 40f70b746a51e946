package bindings;

import java.util.List;
import java.util.Map;

import org.cdk8s.ApiObject;
import org.cdk8s.ApiObjectMetadata;
import org.cdk8s.ApiObjectProps;
import org.cdk8s.Chart;
import org.cdk8s.JsonPatch;
import org.cdk8s.plus27.ContainerProps;
import org.cdk8s.plus27.Deployment;
import org.cdk8s.plus27.DeploymentProps;

import dev.cdk8s.sidecars.Errors;
import dev.cdk8s.sidecars.WithEnvoy;
import dev.cdk8s.sidecars.WithSidecar;

/**
 * The library's refusals, recognised in Java (scripts/bindings-test.sh): jsii throws a
 * RuntimeException that holds the JavaScript error's message, and Errors.isSidecarError /
 * Errors.refusalOf take that message. The twin of test/bindings/python/errors.py.
 */
public final class ErrorsCheck {
    private ErrorsCheck() {
    }

    private static String messageOf(final Runnable f) {
        try {
            f.run();
        } catch (RuntimeException e) {
            return e.getMessage();
        }
        throw new IllegalStateException("ErrorsCheck: nothing was thrown");
    }

    private static void check(final String what, final boolean ok) {
        if (!ok) {
            throw new IllegalStateException("ErrorsCheck: FAILED: " + what);
        }
    }

    public static void main(final String[] args) {
        // At construction: a port out of range.
        Chart chart = new Chart(new org.cdk8s.App(), "construct");
        Deployment web = new Deployment(chart, "web", DeploymentProps.builder()
                .containers(List.of(ContainerProps.builder().name("web").image("ghcr.io/example/web:1.0.0").build())).build());
        String badPort = messageOf(() -> WithEnvoy.Builder.create(chart, "envoy").workload(web).appPort(70000).kubernetesVersion("1.29").build());
        check("a bad prop is a refusal: " + badPort, Errors.isSidecarError(badPort));
        check("a bad prop shares no rule of check", Errors.refusalOf(badPort).getRuleIds().isEmpty());

        // At synthesis: the user's native sidecar on 1.27 (rule CS001), inside cdk8s' "Validation failed".
        org.cdk8s.App app = new org.cdk8s.App();
        Chart synthesis = new Chart(app, "synthesis");
        ApiObject raw = new ApiObject(synthesis, "raw", ApiObjectProps.builder()
                .apiVersion("apps/v1").kind("Deployment").metadata(ApiObjectMetadata.builder().name("raw").build()).build());
        raw.addJsonPatch(JsonPatch.add("/spec", Map.of(
                "selector", Map.of("matchLabels", Map.of("app", "raw")),
                "template", Map.of("metadata", Map.of("labels", Map.of("app", "raw")), "spec", Map.of(
                        "initContainers", List.of(Map.of("name", "early", "image", "ghcr.io/example/early:1.0.0", "restartPolicy", "Always")),
                        "containers", List.of(Map.of("name", "app", "image", "ghcr.io/example/app:1.0.0")))))));
        WithSidecar.Builder.create(synthesis, "helper").workload(raw).image("ghcr.io/example/helper:1.0.0")
                .containerName("helper").kubernetesVersion("1.27").build();
        String atSynth = messageOf(app::synthYaml);
        check("a refusal at synthesis: " + atSynth, Errors.isSidecarError(atSynth));
        check("it carries CS001", Errors.refusalOf(atSynth).getRuleIds().equals(List.of("CS001")));

        // Anything else is not.
        check("another error is none", !Errors.isSidecarError("Error: ENOENT: no such file or directory"));
        check("nothing is none", Errors.refusalOf("") == null);
        System.out.println("java: Errors recognises a refusal at construction, one at synthesis (CS001), and no other error");
    }
}
