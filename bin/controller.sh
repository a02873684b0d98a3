#!/usr/bin/env bash
# `npm start` (worker and trigger in one process), `npm run worker`, `npm run trigger`: the compiled entry in dist/, as
# the image runs it. In a checkout (sources and tsx present) dist/ is first built again if a source changed since the
# last build, and the Deployments' memory settings are set, each unless the caller set it; elsewhere (the image sets
# them itself) dist/ runs as it is. exec: signals reach the controller itself.
set -euo pipefail
role=${1:-main}
case "$role" in
  main) entry=main ;;
  worker) entry=worker/main ;;
  trigger) entry=trigger/main ;;
  *)
    echo "bin/controller.sh: unknown role '$role'; allowed: main (worker and trigger), worker, trigger" >&2
    exit 2
    ;;
esac
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [[ -d "$root/src" && -d "$root/node_modules/tsx" ]]; then
  # Without the caller's NODE_OPTIONS: those are for the controller (a heap limit that small would fail tsc).
  settings=$(cd "$root" && env -u NODE_OPTIONS node --import tsx scripts/prepare-controller.ts "$role")
  while IFS='=' read -r key value; do
    if [[ -n "$key" && -z "${!key+set}" ]]; then export "$key=$value"; fi
  done <<<"$settings"
fi
exec node "$root/dist/$entry.js"
