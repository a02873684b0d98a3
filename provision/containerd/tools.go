//go:build tools

// Package containerdbuild pins the containerd release that `npm run provision` builds for the local stack's real
// nodes: the daemon, its runc shim and ctr (which loads the stack's images into a node).
package containerdbuild

import (
	_ "github.com/containerd/containerd/v2/cmd/containerd"
	_ "github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2"
	_ "github.com/containerd/containerd/v2/cmd/ctr"
)
