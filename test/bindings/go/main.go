// The bindings app in Go, against the cdk8s, cdk8s-plus-27 and constructs Go modules and the
// module jsii-pacmak built (scripts/bindings-test.sh points go.mod's replace directives at them).
// The twin of test/bindings/ts/app.ts: its output must be byte-identical. The target comes from
// CDK8S_SIDECARS_KUBERNETES_VERSION, the output directory from CDK8S_OUTDIR.
package main

import (
	"os"

	"github.com/aws/jsii-runtime-go"
	"github.com/cdk8s-sidecars/cdk8s-sidecars-go/cdk8ssidecars"
	"github.com/cdk8s-team/cdk8s-core-go/cdk8s/v2"
	"github.com/cdk8s-team/cdk8s-plus-go/cdk8splus27/v2"
)

func main() {
	defer jsii.Close()
	if len(os.Args) > 1 && os.Args[1] == "errors" {
		errorsCheck()
		return
	}
	app := cdk8s.NewApp(nil)
	chart := cdk8s.NewChart(app, jsii.String("bindings"), &cdk8s.ChartProps{Namespace: jsii.String("shop")})

	web := cdk8splus27.NewDeployment(chart, jsii.String("web"), &cdk8splus27.DeploymentProps{
		Metadata: &cdk8s.ApiObjectMetadata{Name: jsii.String("web")},
		Containers: &[]*cdk8splus27.ContainerProps{{
			Name: jsii.String("web"), Image: jsii.String("ghcr.io/example/web:1.0.0"), Args: jsii.Strings("--listen=127.0.0.1:8080"),
		}},
	})
	cdk8ssidecars.NewWithLogAgent(chart, jsii.String("logs"), &cdk8ssidecars.WithLogAgentProps{
		Workload: web,
		Agent:    cdk8ssidecars.LogAgent_FluentBit(nil),
		Output: cdk8ssidecars.LogOutput_Loki(&cdk8ssidecars.LokiOutputOptions{
			Host: jsii.String("loki.monitoring.svc"), Labels: &map[string]*string{"team": jsii.String("shop")},
		}),
	})
	cdk8ssidecars.NewWithTracer(chart, jsii.String("tracer"), &cdk8ssidecars.WithTracerProps{
		Workload:         web,
		ExporterEndpoint: jsii.String("otel-collector.observability:4317"),
		ExporterTls:      jsii.Bool(false),
		ExporterHeaders: &map[string]*cdk8ssidecars.SecretKeyReference{
			"authorization": {Secret: &cdk8ssidecars.SecretReference{Name: jsii.String("otel-auth")}, Key: jsii.String("token")},
		},
		DrainTime: cdk8s.Duration_Seconds(jsii.Number(12)),
	})
	cdk8ssidecars.NewWithEnvoy(chart, jsii.String("envoy"), &cdk8ssidecars.WithEnvoyProps{
		Workload:    web,
		AppPort:     jsii.Number(8080),
		AppProtocol: cdk8ssidecars.EnvoyAppProtocol_HTTP2,
		Tls:         &cdk8ssidecars.EnvoyTlsOptions{Secret: &cdk8ssidecars.SecretReference{Name: jsii.String("web-tls")}},
	})

	report := cdk8splus27.NewCronJob(chart, jsii.String("report"), &cdk8splus27.CronJobProps{
		Metadata: &cdk8s.ApiObjectMetadata{Name: jsii.String("report")},
		Schedule: cdk8s.Cron_Daily(),
		Containers: &[]*cdk8splus27.ContainerProps{{
			Name: jsii.String("report"), Image: jsii.String("ghcr.io/example/report:1.0.0"),
			SecurityContext: &cdk8splus27.ContainerSecurityContextProps{User: jsii.Number(1000), Group: jsii.Number(1000)},
			Command:         jsii.Strings("/bin/sh", "-c", `run-report; wget -q -O- --post-data= "$PROXY_QUIT_URL"`),
		}},
	})
	cdk8ssidecars.NewWithSidecar(chart, jsii.String("cloud-sql-proxy"), &cdk8ssidecars.WithSidecarProps{
		Workload:      report,
		ContainerName: jsii.String("cloud-sql-proxy"),
		Image:         jsii.String("gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.25.3"),
		Args:          jsii.Strings("--port=5432", "--health-check", "--http-address=0.0.0.0", "--quitquitquit", "my-project:europe-west1:reports"),
		Ports:         &[]*cdk8ssidecars.SidecarPort{{Number: jsii.Number(9090), Name: jsii.String("proxy-health")}},
		LocalPorts:    jsii.Numbers(5432, 9091),
		StartupCheck:  cdk8ssidecars.SidecarCheck_Http(jsii.Number(9090), &cdk8ssidecars.SidecarHttpCheckOptions{Path: jsii.String("/startup")}),
		JobQuit:       cdk8ssidecars.SidecarQuit_Http(jsii.Number(9091), jsii.String("/quitquitquit"), jsii.String("PROXY_QUIT_URL")),
		// A Go map has no order: the library must not depend on the order of appEnv's keys.
		AppEnv: &map[string]*string{"DB_HOST": jsii.String("127.0.0.1"), "DB_PORT": jsii.String("5432")},
	})

	app.Synth()
}
