//go:build tools

// Package lwsupstreambuild pins the upstream LeaderWorkerSet release that `npm run provision` builds, the
// controller the benchmark compares this project with.
package lwsupstreambuild

import (
	_ "sigs.k8s.io/lws/cmd"
)
