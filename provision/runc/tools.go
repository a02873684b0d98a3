//go:build tools

// Package runcbuild pins the runc release that `npm run provision` builds for the local stack's real nodes.
package runcbuild

import _ "github.com/opencontainers/runc"
