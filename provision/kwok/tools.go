//go:build tools

// Package kwokbuild pins the KWOK release that `npm run provision` builds.
package kwokbuild

import (
	_ "sigs.k8s.io/kwok/cmd/kwok"
)
