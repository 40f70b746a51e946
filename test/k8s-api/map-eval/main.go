// map-eval: Kubernetes' own MutatingAdmissionPolicy code (k8s.io/apiserver v0.37.2,
// staging/src/k8s.io/apiserver/pkg/admission/plugin/policy/mutating: compilePolicy of compilation.go,
// restated with its exported parts) on a policy (JSON, the file argv[1]) and pods (JSON lines on
// stdin). The policy's expressions are compiled as the API server compiles them when the policy is
// created (environment.NewExpressions: errors on stderr, exit 3) and when it runs
// (StoredExpressions); each pod is matched and patched as the dispatcher does, and printed as one
// JSON line: {"pod": ...}, {"skippedBy": "<condition>"} or {"error": "..."}.
// Defaulting after the patch (dispatcher.go) is not run: the caller compares undefaulted pods.
// Used by test/k8s-api/admission-policy.real-test.ts (npm run test:k8s-api).
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/policy/mutating/patch"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/environment"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/openapi/openapitest"
)

func main() {
	var policy admissionregistrationv1.MutatingAdmissionPolicy
	b, _ := os.ReadFile(os.Args[1])
	if err := json.Unmarshal(b, &policy); err != nil {
		panic(err)
	}
	opts := plugincel.OptionalVariableDeclarations{HasParams: false, HasAuthorizer: true}
	// NewExpressions: what the API server checks when the policy is created
	for _, mode := range []environment.Type{environment.NewExpressions, environment.StoredExpressions} {
		compiler, err := plugincel.NewCompositedCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
		if err != nil {
			panic(err)
		}
		vars := make([]plugincel.NamedExpressionAccessor, len(policy.Spec.Variables))
		for i, v := range policy.Spec.Variables {
			vars[i] = &validating.Variable{Name: v.Name, Expression: v.Expression}
		}
		compiler.CompileAndStoreVariables(vars, opts, mode)
		acc := make([]plugincel.ExpressionAccessor, len(policy.Spec.MatchConditions))
		for i := range policy.Spec.MatchConditions {
			acc[i] = (*matchconditions.MatchCondition)(&policy.Spec.MatchConditions[i])
		}
		cond := compiler.CompileCondition(acc, opts, mode)
		failed := false
		for _, e := range cond.CompilationErrors() {
			fmt.Fprintf(os.Stderr, "mode %v: match condition: %v\n", mode, e)
			failed = true
		}
		po := opts
		po.HasPatchTypes = true
		ev := compiler.CompileMutatingEvaluator(&patch.JSONPatchCondition{Expression: policy.Spec.Mutations[0].JSONPatch.Expression}, po, mode)
		for _, e := range ev.CompilationErrors() {
			fmt.Fprintf(os.Stderr, "mode %v: patch: %v\n", mode, e)
			failed = true
		}
		if failed {
			os.Exit(3)
		}
		if mode == environment.NewExpressions {
			continue
		}
		matcher := matchconditions.NewMatcher(cond, policy.Spec.FailurePolicy, "policy", "validate", policy.Name)
		patcher := patch.NewJSONPatcher(ev)
		tcManager := patch.NewTypeConverterManager(nil, openapitest.NewEmbeddedFileClient())
		gvk := schema.GroupVersionKind{Version: "v1", Kind: "Pod"}
		gvr := schema.GroupVersionResource{Version: "v1", Resource: "pods"}
		in := bufio.NewScanner(os.Stdin)
		in.Buffer(make([]byte, 16<<20), 16<<20)
		for in.Scan() {
			pod := &corev1.Pod{}
			if err := json.Unmarshal(in.Bytes(), pod); err != nil {
				panic(err)
			}
			pod.Kind, pod.APIVersion = "Pod", "v1"
			ctx := compiler.CreateContext(context.Background())
			attrs := admission.NewAttributesRecord(pod, nil, gvk, pod.Namespace, pod.Name, gvr, "", admission.Create, &metav1.CreateOptions{}, false, nil)
			vAttrs := &admission.VersionedAttributes{Attributes: attrs, VersionedKind: gvk, VersionedObject: admission.NewLazyObject(pod)}
			m := matcher.Match(ctx, vAttrs, nil, nil)
			if m.Error != nil {
				out(map[string]any{"error": "match: " + m.Error.Error()})
				continue
			}
			if !m.Matches {
				out(map[string]any{"skippedBy": m.FailedConditionName})
				continue
			}
			r := patch.Request{
				MatchedResource: gvr, VersionedAttributes: vAttrs, ObjectInterfaces: admission.NewObjectInterfacesFromScheme(scheme.Scheme),
				OptionalVariables: plugincel.OptionalVariableBindings{}, Namespace: nil, TypeConverter: tcManager.GetTypeConverter(gvk),
			}
			obj, err := patcher.Patch(ctx, r, celconfig.RuntimeCELCostBudget)
			if err != nil {
				out(map[string]any{"error": err.Error()})
				continue
			}
			u, _ := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
			out(map[string]any{"pod": u})
		}
	}
}

func out(v any) {
	b, _ := json.Marshal(v)
	fmt.Println(string(b))
}
