module cdk8s-sidecars.dev/test/bindings-app

go 1.25

require (
	github.com/aws/jsii-runtime-go v1.140.0
	github.com/cdk8s-sidecars/cdk8s-sidecars-go/cdk8ssidecars v0.0.0
	github.com/cdk8s-team/cdk8s-core-go/cdk8s/v2 v2.70.106
	github.com/cdk8s-team/cdk8s-plus-go/cdk8splus27/v2 v2.9.5
)
