// decoder: reads Kubernetes manifests as the API server does, strictly, with the k8s.io/api types
// of ONE release (the version go.mod requires; scripts/build-k8s-decoders.sh builds one binary per
// supported release).
//
//	decoder FILE...
//
// Each FILE holds YAML documents (`---`-separated, what `cdk8s synth` writes). Every document is
// read like a request body under `fieldValidation=Strict` (kubectl's default): YAML to JSON with
// sigs.k8s.io/yaml (duplicate keys are errors), then sigs.k8s.io/json's strict, case-sensitive
// decoder into the typed object of its apiVersion/kind (unknown and duplicate fields are errors;
// a wrong type is a fatal error). One JSON line per document on stdout:
//
//	{"file":"a.yaml","index":0,"apiVersion":"apps/v1","kind":"Deployment","name":"web","errors":["..."]}
//
// An apiVersion/kind that this release does not define is an error too ("no kind ... registered").
// Exit status 0 when every document decodes cleanly, 1 otherwise, 2 on a usage or I/O error.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

type result struct {
	File       string   `json:"file"`
	Index      int      `json:"index"`
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Name       string   `json:"name"`
	Errors     []string `json:"errors"`
}

func newScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		corev1.AddToScheme, appsv1.AddToScheme, batchv1.AddToScheme, policyv1.AddToScheme, rbacv1.AddToScheme,
		networkingv1.AddToScheme, autoscalingv2.AddToScheme, admissionregistrationv1.AddToScheme,
	} {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	return s
}

func decode(s *runtime.Scheme, doc []byte) (meta struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
}, errs []string) {
	data, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		return meta, []string{"yaml: " + err.Error()}
	}
	_ = json.Unmarshal(data, &meta)
	gv, err := schema.ParseGroupVersion(meta.APIVersion)
	if err != nil {
		return meta, []string{err.Error()}
	}
	obj, err := s.New(gv.WithKind(meta.Kind))
	if err != nil {
		return meta, []string{err.Error()}
	}
	strict, err := kjson.UnmarshalStrict(data, obj)
	if err != nil {
		errs = append(errs, "fatal: "+err.Error())
	}
	for _, e := range strict {
		errs = append(errs, "strict: "+e.Error())
	}
	return meta, errs
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: decoder FILE...")
		os.Exit(2)
	}
	s := newScheme()
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	bad := false
	for _, file := range os.Args[1:] {
		f, err := os.Open(file)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		reader := utilyaml.NewYAMLReader(bufio.NewReader(f))
		for index := 0; ; {
			doc, err := reader.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				fmt.Fprintln(os.Stderr, file, err)
				os.Exit(2)
			}
			if len(bytes.TrimSpace(doc)) == 0 || string(bytes.TrimSpace(doc)) == "---" {
				continue
			}
			meta, errs := decode(s, doc)
			if errs == nil {
				errs = []string{}
			}
			bad = bad || len(errs) > 0
			line, _ := json.Marshal(result{file, index, meta.APIVersion, meta.Kind, meta.Metadata.Name, errs})
			out.Write(append(line, '\n'))
			index++
		}
		f.Close()
	}
	out.Flush()
	if bad {
		os.Exit(1)
	}
}
