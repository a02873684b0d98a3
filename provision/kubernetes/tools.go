//go:build tools

// Package kubebuild pins the Kubernetes release that `npm run provision` builds; go.mod maps
// the staging modules that k8s.io/kubernetes replaces locally to their published versions.
package kubebuild

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
