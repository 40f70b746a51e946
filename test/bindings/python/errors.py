# The library's refusals, recognised in Python (scripts/bindings-test.sh): jsii raises a
# RuntimeError that holds the JavaScript error's message, and Errors.is_sidecar_error /
# Errors.refusal_of take that message. One refusal at construction, one at synthesis (with the
# rule id `check` shares), and an error that is none. The twin of the Java and Go checks.
import sys

from cdk8s import ApiObject, ApiObjectMetadata, App, Chart, JsonPatch
import cdk8s_plus_27 as kplus
from cdk8s_sidecars import Errors, WithEnvoy, WithSidecar


def message_of(f):
    try:
        f()
    except Exception as e:  # jsii's RuntimeError: the message only
        return str(e)
    sys.exit("errors.py: nothing was thrown")


def check(what, ok):
    if not ok:
        sys.exit(f"errors.py: FAILED: {what}")


# At construction: a port out of range.
chart = Chart(App(), "construct")
web = kplus.Deployment(chart, "web", containers=[kplus.ContainerProps(name="web", image="ghcr.io/example/web:1.0.0")])
bad_port = message_of(lambda: WithEnvoy(chart, "envoy", workload=web, app_port=70000, kubernetes_version="1.29"))
check(f"a bad prop is a refusal: {bad_port}", Errors.is_sidecar_error(bad_port))
check("a bad prop shares no rule of check", Errors.refusal_of(bad_port).rule_ids == [])

# At synthesis: the user's native sidecar on 1.27 (rule CS001), inside cdk8s' "Validation failed".
app = App()
chart = Chart(app, "synthesis")
raw = ApiObject(chart, "raw", api_version="apps/v1", kind="Deployment", metadata=ApiObjectMetadata(name="raw"))
raw.add_json_patch(JsonPatch.add("/spec", {
    "selector": {"matchLabels": {"app": "raw"}},
    "template": {"metadata": {"labels": {"app": "raw"}}, "spec": {
        "initContainers": [{"name": "early", "image": "ghcr.io/example/early:1.0.0", "restartPolicy": "Always"}],
        "containers": [{"name": "app", "image": "ghcr.io/example/app:1.0.0"}],
    }},
}))
WithSidecar(chart, "helper", workload=raw, image="ghcr.io/example/helper:1.0.0", container_name="helper", kubernetes_version="1.27")
at_synth = message_of(lambda: app.synth_yaml())
check(f"a refusal at synthesis: {at_synth}", Errors.is_sidecar_error(at_synth))
check("it carries CS001", Errors.refusal_of(at_synth).rule_ids == ["CS001"])

# Anything else is not.
check("another error is none", not Errors.is_sidecar_error("Error: ENOENT: no such file or directory"))
check("nothing is none", Errors.refusal_of("") is None)
print("python: Errors recognises a refusal at construction, one at synthesis (CS001), and no other error")
