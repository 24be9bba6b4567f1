#!/usr/bin/env bash
# Applies the relay's topic settings (ops/kafka/topics.md) to every existing relay.* topic. Topics the
# relay creates later take the broker defaults, so set those on the brokers too.
#
# Usage: apply-topic-config.sh <bootstrap-server> [kafka bin dir, default /opt/kafka/bin]
# In docker compose: docker compose exec kafka bash /ops/kafka/apply-topic-config.sh kafka:9092
set -euo pipefail

bootstrap="${1:?usage: apply-topic-config.sh <bootstrap-server> [kafka bin dir]}"
bin="${2:-/opt/kafka/bin}"

MAX_MESSAGE_BYTES=12582912   # 12 MB: above the largest plan payload (10 MB) plus record metadata
WEEK_MS=604800000
MONTH_MS=2592000000
DAY_MS=86400000

retention_for() {
  case "$1" in
    relay.dead) echo "$MONTH_MS" ;;
    relay.config) echo "$DAY_MS" ;;
    *) echo "$WEEK_MS" ;;
  esac
}

topics=$("$bin/kafka-topics.sh" --bootstrap-server "$bootstrap" --list | grep '^relay\.' || true)
if [ -z "$topics" ]; then
  echo "no relay.* topics on $bootstrap yet: start the relay first (it creates them)" >&2
  exit 1
fi

for topic in $topics; do
  "$bin/kafka-configs.sh" --bootstrap-server "$bootstrap" --alter --entity-type topics --entity-name "$topic" \
    --add-config "max.message.bytes=$MAX_MESSAGE_BYTES,retention.ms=$(retention_for "$topic"),cleanup.policy=delete"
done
