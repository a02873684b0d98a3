//go:build tools

// Package etcdbuild pins the etcd release that `npm run provision` builds (the server module root is its main package).
package etcdbuild

import _ "go.etcd.io/etcd/server/v3"
