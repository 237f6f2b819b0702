#!/bin/sh
# bench_load.sh BUILD [bench_load options] - the load bench with mTLS: makes
# one client certificate per --per-cert agents (CN the group's first agent,
# DNS SANs all of its agents) with tests/tls/mkcerts.sh, then runs
# BUILD/bench/bench_load against BUILD/bin/dratopo-coordinator, which it
# starts itself (temp database, random port). Certificates are kept in
# BUILD/bench/load-tls-AGENTS-PERCERT for a day.
#
#   bench/bench_load.sh build                      # 1,000 agents, 10 minutes
#   bench/bench_load.sh build --agents 200 --duration 30 --check --no-rss-check
set -eu

[ $# -ge 1 ] || { echo "usage: bench_load.sh BUILD [bench_load options]" >&2; exit 2; }
build=$1
shift
here=$(cd "$(dirname "$0")" && pwd)
agents=1000
per=10
prev=""
for a in "$@"; do
	case $prev in
	--agents) agents=$a ;;
	--per-cert) per=$a ;;
	esac
	prev=$a
done

certs="$build/bench/load-tls-$agents-$per"
last=$(( (agents - 1) / per * per ))
if [ -z "$(find "$certs/client-agent-$(printf %05d "$last").pem" -mmin -1440 2>/dev/null)" ]; then
	specs=$(awk -v n="$agents" -v g="$per" 'BEGIN {
		for (i = 0; i < n; i += g) {
			s = sprintf("agent-%05d=", i)
			for (j = i; j < i + g && j < n; j++)
				s = s sprintf("%sagent-%05d", j > i ? "," : "", j)
			print s
		}
	}')
	# shellcheck disable=SC2086 # one word per certificate
	sh "$here/../tests/tls/mkcerts.sh" "$certs" admin $specs >/dev/null
fi
exec "$build/bench/bench_load" --coordinator-bin "$build/bin/dratopo-coordinator" \
	--tls-dir "$certs" "$@"
