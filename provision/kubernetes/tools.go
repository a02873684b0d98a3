//go:build tools

// Package kubebuild pins the Kubernetes release that `npm run provision` builds: the control plane, kubectl, and
// the real nodes' kubelet and kube-proxy. go.mod maps the staging modules that k8s.io/kubernetes replaces locally to
// their published versions.
package kubebuild

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
