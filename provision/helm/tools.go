//go:build tools

// Package helmbuild pins the Helm release that `npm run provision` builds: the chart's lint, template and package,
// and its install in the end-to-end suite.
package helmbuild

import _ "helm.sh/helm/v4/cmd/helm"
