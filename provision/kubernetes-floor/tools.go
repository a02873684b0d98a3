//go:build tools

// Package kubebuildfloor pins the oldest Kubernetes release this project supports (see docs/install.md), which
// `npm run provision` builds beside the newest; go.mod maps the staging modules to their published versions.
package kubebuildfloor

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
)
