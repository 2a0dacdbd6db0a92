#!/usr/bin/env bash
# What `npm test` talks to, made present on a Debian or Ubuntu machine (as root): it starts the
# services that are down (PostgreSQL, Redis, NATS) and installs the programs that are missing
# (bubblewrap and the Python data stack with Jupyter for the code interpreter, Prometheus, Chromium).
# Quick when everything is there already. CI runs it before `npm test`; so can a developer.
set -euo pipefail

up() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
wait_for() { for _ in $(seq 1 30); do up "$1" && return 0; sleep 1; done; up "$1"; }

# PostgreSQL backs the storage and multi-replica tests.
if ! pg_isready -h 127.0.0.1 -p 5432 >/dev/null 2>&1; then
  echo "starting PostgreSQL"
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql)" main start || true
  for _ in $(seq 1 30); do pg_isready -h 127.0.0.1 -p 5432 >/dev/null 2>&1 && break; sleep 1; done
fi
pg_isready -h 127.0.0.1 -p 5432

# Redis backs the shared rate limits and the Redis broker, NATS the NATS broker.
if ! up 6379; then
  echo "starting Redis"
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no --dir /var/lib/redis --logfile /var/log/redis/ci.log || true
  wait_for 6379
fi
if ! up 4222; then
  echo "starting NATS"
  start-stop-daemon --start --oknodo --background --exec /usr/sbin/nats-server -- -a 127.0.0.1 -p 4222 -js -sd /var/lib/nats-server -l /var/log/nats-server.log || true
  wait_for 4222
fi

apt_install() {
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

# The code interpreter's data-science backends (kernel, cpython): the OS's CPython with numpy, pandas,
# matplotlib and scipy, sandboxed by bubblewrap; the kernel backend's ipykernel, hosted by Jupyter Server.
if ! command -v bwrap >/dev/null 2>&1 || ! /usr/bin/python3 -c 'import ipykernel, jupyter_server, jupyter_client, numpy, pandas, matplotlib, scipy' >/dev/null 2>&1; then
  echo "installing bubblewrap, Jupyter and the Python data-science packages"
  apt_install bubblewrap python3-numpy python3-pandas python3-matplotlib python3-scipy python3-ipykernel python3-jupyter-client python3-jupyter-server
fi

# Prometheus scrapes a two-worker gateway in test/usage-prometheus.e2e-spec.ts.
if ! command -v prometheus >/dev/null 2>&1; then
  echo "installing prometheus"
  apt_install prometheus
fi

# The console's browser test drives Debian's Chromium (test/console.e2e-spec.ts, through playwright-core).
if ! command -v chromium >/dev/null 2>&1; then
  echo "installing chromium"
  apt_install chromium
fi
