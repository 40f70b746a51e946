// The library's refusals, recognised in Go (scripts/bindings-test.sh, `app errors`): jsii panics
// with an error that holds the JavaScript error's message, and cdk8ssidecars.Errors_IsSidecarError
// / Errors_RefusalOf take that message. The twin of test/bindings/python/errors.py.
package main

import (
	"fmt"
	"os"
	"reflect"

	"github.com/aws/jsii-runtime-go"
	"github.com/cdk8s-sidecars/cdk8s-sidecars-go/cdk8ssidecars"
	"github.com/cdk8s-team/cdk8s-core-go/cdk8s/v2"
	"github.com/cdk8s-team/cdk8s-plus-go/cdk8splus27/v2"
)

// messageOf runs f and returns the message of what it panicked with.
func messageOf(f func()) (message string) {
	defer func() {
		r := recover()
		if r == nil {
			fail("nothing was thrown")
		}
		if e, ok := r.(error); ok {
			message = e.Error()
		} else {
			message = fmt.Sprint(r)
		}
	}()
	f()
	return ""
}

func fail(what string) {
	fmt.Fprintf(os.Stderr, "errors.go: FAILED: %s\n", what)
	os.Exit(1)
}

func check(what string, ok bool) {
	if !ok {
		fail(what)
	}
}

func errorsCheck() {
	// At construction: a port out of range.
	chart := cdk8s.NewChart(cdk8s.NewApp(nil), jsii.String("construct"), nil)
	web := cdk8splus27.NewDeployment(chart, jsii.String("web"), &cdk8splus27.DeploymentProps{
		Containers: &[]*cdk8splus27.ContainerProps{{Name: jsii.String("web"), Image: jsii.String("ghcr.io/example/web:1.0.0")}},
	})
	badPort := messageOf(func() {
		cdk8ssidecars.NewWithEnvoy(chart, jsii.String("envoy"), &cdk8ssidecars.WithEnvoyProps{
			Workload: web, AppPort: jsii.Number(70000), KubernetesVersion: jsii.String("1.29"),
		})
	})
	check("a bad prop is a refusal: "+badPort, *cdk8ssidecars.Errors_IsSidecarError(jsii.String(badPort)))
	check("a bad prop shares no rule of check", len(*cdk8ssidecars.Errors_RefusalOf(jsii.String(badPort)).RuleIds) == 0)

	// At synthesis: the user's native sidecar on 1.27 (rule CS001), inside cdk8s' "Validation failed".
	app := cdk8s.NewApp(nil)
	synthesis := cdk8s.NewChart(app, jsii.String("synthesis"), nil)
	raw := cdk8s.NewApiObject(synthesis, jsii.String("raw"), &cdk8s.ApiObjectProps{
		ApiVersion: jsii.String("apps/v1"), Kind: jsii.String("Deployment"), Metadata: &cdk8s.ApiObjectMetadata{Name: jsii.String("raw")},
	})
	raw.AddJsonPatch(cdk8s.JsonPatch_Add(jsii.String("/spec"), map[string]interface{}{
		"selector": map[string]interface{}{"matchLabels": map[string]string{"app": "raw"}},
		"template": map[string]interface{}{
			"metadata": map[string]interface{}{"labels": map[string]string{"app": "raw"}},
			"spec": map[string]interface{}{
				"initContainers": []interface{}{map[string]string{"name": "early", "image": "ghcr.io/example/early:1.0.0", "restartPolicy": "Always"}},
				"containers":     []interface{}{map[string]string{"name": "app", "image": "ghcr.io/example/app:1.0.0"}},
			},
		},
	}))
	cdk8ssidecars.NewWithSidecar(synthesis, jsii.String("helper"), &cdk8ssidecars.WithSidecarProps{
		Workload: raw, Image: jsii.String("ghcr.io/example/helper:1.0.0"), ContainerName: jsii.String("helper"), KubernetesVersion: jsii.String("1.27"),
	})
	atSynth := messageOf(func() { app.SynthYaml() })
	check("a refusal at synthesis: "+atSynth, *cdk8ssidecars.Errors_IsSidecarError(jsii.String(atSynth)))
	ids := *cdk8ssidecars.Errors_RefusalOf(jsii.String(atSynth)).RuleIds
	check(fmt.Sprintf("it carries CS001 (%d ids)", len(ids)), reflect.DeepEqual(ids, []*string{jsii.String("CS001")}))

	// Anything else is not.
	check("another error is none", !*cdk8ssidecars.Errors_IsSidecarError(jsii.String("Error: ENOENT: no such file or directory")))
	check("nothing is none", cdk8ssidecars.Errors_RefusalOf(jsii.String("")) == nil)
	fmt.Println("go: Errors recognises a refusal at construction, one at synthesis (CS001), and no other error")
}
