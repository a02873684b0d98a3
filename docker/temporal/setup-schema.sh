#!/bin/sh
# One-shot (docker-compose.yml, service temporal-schema, image temporalio/admin-tools): creates the Temporal
# databases in PostgreSQL and brings their schemas to the version of the server image. Safe to run again: an
# existing database is kept, and update-schema only applies the versions that are missing.
set -eu

: "${POSTGRES_SEEDS:?set POSTGRES_SEEDS (the PostgreSQL host)}"
: "${POSTGRES_USER:?set POSTGRES_USER}"
: "${SQL_PASSWORD:?set SQL_PASSWORD (read by temporal-sql-tool)}"
DB_PORT=${DB_PORT:-5432}
SCHEMA_DIR=${SCHEMA_DIR:-/etc/temporal/schema/postgresql/v12}

sql() {
  temporal-sql-tool --plugin postgres12 --ep "$POSTGRES_SEEDS" -p "$DB_PORT" -u "$POSTGRES_USER" "$@"
}

setup() {
  db=$1
  versioned=$2
  # CREATE DATABASE fails when the database exists already, which is the normal case on every later start.
  if sql --db "$db" create; then echo "database $db created"; else echo "database $db exists"; fi
  # update-schema needs the schema_version table that setup-schema -v 0.0 creates: a first start has neither.
  if ! sql --db "$db" update-schema -d "$versioned"; then
    sql --db "$db" setup-schema -v 0.0
    sql --db "$db" update-schema -d "$versioned"
  fi
  echo "database $db is at the current schema"
}

setup "${DBNAME:-temporal}" "$SCHEMA_DIR/temporal/versioned"
setup "${VISIBILITY_DBNAME:-temporal_visibility}" "$SCHEMA_DIR/visibility/versioned"
