//go:build tools

// Package cnibuild pins the CNI plugins that the local stack's real nodes give their pods a network with.
package cnibuild

import (
	_ "github.com/containernetworking/plugins/plugins/ipam/host-local"
	_ "github.com/containernetworking/plugins/plugins/main/bridge"
	_ "github.com/containernetworking/plugins/plugins/main/loopback"
)
