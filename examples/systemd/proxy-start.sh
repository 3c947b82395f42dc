#!/bin/sh
# Started by proxy-hot-restarter with RESTART_EPOCH set; `exec` so the restarter signals the proxy
# itself. Every epoch of one family needs the same base id: epoch 0 takes a free one and writes it
# to the runtime directory (systemd's RuntimeDirectory=proxy: /run/proxy), later epochs read it
# back. (Envoy refuses --use-dynamic-base-id with a non-zero --restart-epoch; so does this proxy.)
set -e
run_dir="${RUNTIME_DIRECTORY:-/run/proxy}"
if [ "$RESTART_EPOCH" = 0 ]; then
  identity="--use-dynamic-base-id --base-id-path $run_dir/base-id"
else
  identity="--base-id $(cat "$run_dir/base-id")"
fi
# shellcheck disable=SC2086 # $identity is two options and their values
exec proxy -c "${PROXY_CONFIG:-/etc/proxy/proxy.yaml}" \
  --restart-epoch "$RESTART_EPOCH" \
  $identity \
  --drain-time-s "${PROXY_DRAIN_TIME_S:-60}" \
  --parent-shutdown-time-s "${PROXY_PARENT_SHUTDOWN_TIME_S:-90}" \
  --log-path "${PROXY_LOG_PATH:-/var/log/proxy/proxy.log}"
