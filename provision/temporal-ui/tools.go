//go:build tools

// Package temporaluibuild pins the Temporal Web UI server release that `npm run provision` builds.
package temporaluibuild

import (
	_ "github.com/temporalio/ui-server/v2/cmd/server"
)
