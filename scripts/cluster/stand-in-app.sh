#!/bin/sh
# The example app's programs (examples/*.ts), as stand-ins for the test cluster: each is this
# busybox script, called by its image's entrypoint name (/app/<name>). Each takes the arguments
# the example's manifests give it, answers where their probes look, writes numbered log lines
# where the example's log agent reads them, and exits 0 on SIGTERM.
#   shop-web --listen=HOST:PORT ...                 HTTP on HOST:PORT, lines to /var/log/app/web.log
#   ledger                                           HTTP (the TCP probe) on :7000, lines to /var/log/app/ledger.log
#   metrics-exporter --web.listen-address=:PORT --log.file=FILE   /healthz on PORT, lines to FILE
#   nightly-report --log-file=FILE [--lines=N]       N (default 20) lines to FILE, then exit 0
# LINE_INTERVAL (seconds, default 1) paces the servers' lines.
set -u
name=${0##*/}
listen="" log="" lines=20
for a in "$@"; do
  case $a in
    --listen=*) listen=${a#*=} ;;
    --web.listen-address=*) listen=${a#*=} ;;
    --log.file=* | --log-file=*) log=${a#*=} ;;
    --lines=*) lines=${a#*=} ;;
  esac
done
case $name in
  shop-web) : "${listen:=0.0.0.0:8080}" "${log:=/var/log/app/web.log}" ;;
  ledger) : "${listen:=0.0.0.0:7000}" "${log:=/var/log/app/ledger.log}" ;;
  metrics-exporter) : "${listen:=:9100}" "${log:=/var/log/exporter/exporter.log}" ;;
  nightly-report)
    : "${log:=/var/log/app/report.log}"
    i=1
    while [ "$i" -le "$lines" ]; do
      echo "$(date -u '+%Y-%m-%dT%H:%M:%SZ') nightly-report line $i of $lines" >> "$log" || exit 1
      i=$((i + 1))
    done
    echo "nightly-report: wrote $lines lines to $log"
    exit 0 ;;
  *) echo "stand-in-app: unknown program name $name" >&2; exit 2 ;;
esac
# busybox httpd: `-p [IP:]PORT`, a leading ':' is "every address"
port=${listen#:}
/bin/busybox httpd -f -p "$port" -h /www &
server=$!
trap 'kill "$server" 2>/dev/null; echo "$name: SIGTERM after $n lines"; exit 0' TERM INT
echo "$name: listening on $port, writing to $log"
n=0
while kill -0 "$server" 2>/dev/null; do
  n=$((n + 1))
  echo "$(date -u '+%Y-%m-%dT%H:%M:%SZ') $name line $n" >> "$log"
  sleep "${LINE_INTERVAL:-1}" & wait $!
done
echo "$name: the HTTP server exited" >&2
exit 1
