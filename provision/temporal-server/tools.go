//go:build tools

// Package temporalserverbuild pins the Temporal server release that `npm run provision` builds.
package temporalserverbuild

import (
	_ "go.temporal.io/server/cmd/server"
	_ "go.temporal.io/server/cmd/tools/sql"
)
