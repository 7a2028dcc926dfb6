// Command airlock-validate-k8s checks airlock's Kubernetes manifests
// offline (see package validate). Each argument is a manifest directory
// with a kustomization.yaml, a YAML file, or "-" for a stream on stdin
// (e.g. `kubectl kustomize deploy/kubernetes | airlock-validate-k8s -`).
// It prints every problem and exits 1 if there is any, 2 on usage errors.
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/airlock-dev/airlock/deploy/validate"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: airlock-validate-k8s DIR|FILE|- ...")
		os.Exit(2)
	}
	bad := 0
	for _, arg := range os.Args[1:] {
		probs, err := run(arg)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		for _, p := range probs {
			fmt.Println(p)
		}
		bad += len(probs)
		if len(probs) == 0 {
			fmt.Fprintf(os.Stderr, "%s: ok\n", arg)
		}
	}
	if bad > 0 {
		fmt.Fprintf(os.Stderr, "%d problems\n", bad)
		os.Exit(1)
	}
}

func run(arg string) ([]validate.Problem, error) {
	if arg == "-" {
		data, err := io.ReadAll(os.Stdin)
		if err != nil {
			return nil, err
		}
		return validate.Stream("stdin", data), nil
	}
	st, err := os.Stat(arg)
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		return validate.Dir(arg), nil
	}
	data, err := os.ReadFile(arg)
	if err != nil {
		return nil, err
	}
	return validate.Stream(arg, data), nil
}
