#!/bin/sh
# One-shot (docker-compose.yml, service temporal-setup, image temporalio/admin-tools): once the server answers,
# creates the Temporal namespace the worker and the trigger use, and registers the search attributes that every
# lws-temporal workflow carries (docs/install.md, "Search attributes"). Safe to run again: what exists is
# left as it is. The trigger checks the attributes once at its start, so it starts after this service completed.
set -eu

: "${TEMPORAL_ADDRESS:?set TEMPORAL_ADDRESS (host:port of the frontend)}"
NAMESPACE=${TEMPORAL_NAMESPACE:-default}
RETENTION=${TEMPORAL_NAMESPACE_RETENTION:-72h}
ATTEMPTS=${SETUP_ATTEMPTS:-60}

attempt=1
until temporal operator cluster health --address "$TEMPORAL_ADDRESS"; do
  if [ "$attempt" -ge "$ATTEMPTS" ]; then
    echo "Temporal at $TEMPORAL_ADDRESS is not healthy after $ATTEMPTS attempts" >&2
    exit 1
  fi
  attempt=$((attempt + 1))
  sleep 2
done

if temporal operator namespace describe --address "$TEMPORAL_ADDRESS" --namespace "$NAMESPACE" >/dev/null 2>&1; then
  echo "namespace $NAMESPACE exists"
else
  temporal operator namespace create --address "$TEMPORAL_ADDRESS" --namespace "$NAMESPACE" --retention "$RETENTION"
  echo "namespace $NAMESPACE created (retention $RETENTION)"
fi

# A new namespace reaches the server's namespace cache within seconds; until then it is "not found" here.
attempt=1
until existing=$(temporal operator search-attribute list --address "$TEMPORAL_ADDRESS" --namespace "$NAMESPACE"); do
  if [ "$attempt" -ge "$ATTEMPTS" ]; then
    echo "cannot list the search attributes of namespace $NAMESPACE after $ATTEMPTS attempts" >&2
    exit 1
  fi
  attempt=$((attempt + 1))
  sleep 2
done
for pair in LwsCluster:Keyword LwsNamespace:Keyword LwsName:Keyword GroupIndex:Int TerminationPolicy:Keyword Lifecycle:Keyword; do
  name=${pair%%:*}
  type=${pair#*:}
  if printf '%s\n' "$existing" | grep -qw "$name"; then
    echo "search attribute $name exists"
  else
    temporal operator search-attribute create --address "$TEMPORAL_ADDRESS" --namespace "$NAMESPACE" \
      --name "$name" --type "$type"
    echo "search attribute $name ($type) created"
  fi
done
