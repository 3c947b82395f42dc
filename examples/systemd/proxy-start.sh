#!/bin/sh
# Started by proxy-hot-restarter with RESTART_EPOCH set; `exec` so the restarter signals the proxy
# itself. Every epoch must get the same --base-id (and --socket-path, if you change it).
exec proxy -c /etc/proxy/proxy.yaml \
  --restart-epoch "$RESTART_EPOCH" \
  --base-id 0 \
  --drain-time-s 60 \
  --parent-shutdown-time-s 90 \
  --log-path /var/log/proxy/proxy.log
