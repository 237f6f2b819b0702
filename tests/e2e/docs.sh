#!/usr/bin/env bash
# docs.sh BUILD_DIR - the docs' shell examples run. From README.md and
# docs/*.md it takes every command line of their code blocks (indented or
# fenced; "$ " prompts stripped, "\" continuations joined) that starts with
# one of the programs (dratopo, dratopo-agent, build/bin/...), and runs it
# from the source tree with the built programs first on PATH:
#   - a usage error (exit 2), an unknown option, or a file that does not
#     exist fails the suite: a stale command or a missing example file;
#   - exits 0, 3 (plan/allocate: something unschedulable), 4 and 5 (verify:
#     drift, unknown type) are documented outcomes and pass; exit 1 passes
#     only when the block shows that the command fails (its error message
#     follows it in the block).
# Every path the docs name under examples/ or tests/fixtures/ must exist.
# Commands that cannot run here are left out, each with its reason:
#   - placeholders in capitals (FILE, ADDR, NODE, TYPE) or "...": a form,
#     not a command;
#   - --coordinator ADDR: needs a running coordinator (the README's
#     walkthrough with throwaway certificates is covered by coordinator_e2e);
#   - kubectl, systemctl, docker, apt-get, cmake, tools/dev, npm, a pipe
#     into or a background "&": needs a cluster, root, the network, or
#     minutes (tools/dev test is CI itself);
#   - a block after "<!-- docs-test: skip REASON -->": marked by hand.
NAME=docs; . "$(dirname "$0")/lib.sh"
export PATH="$1/bin:$PATH"
cd "$ROOT" || exit 1
ran=0 skipped=0

# commands FILE: "LINE<TAB>COMMAND<TAB>EXPECTS_FAILURE" for each command.
commands() {
	awk '
	function flush_block() { if (ncmd) for (i = 1; i <= ncmd; i++)
		printf "%d\t%s\t%d\n", cl[i], cmd[i], fails[i]; ncmd = 0 }
	/<!-- docs-test: skip/ { skipnext = 1; next }
	/^```/ { if (infence) { flush_block(); infence = 0; skipblock = 0 }
		 else { infence = 1; skipblock = skipnext; skipnext = 0 } next }
	{
		line = $0
		incode = infence || line ~ /^    / || (line ~ /^\t/)
		if (!incode) { if (line !~ /^[[:space:]]*$/) { flush_block(); skipblock = 0 } next }
		if (!infence && line !~ /^[[:space:]]*$/ && prev_blank_text) { skipblock = skipnext; skipnext = 0 }
		sub(/^    /, "", line)
		if (skipblock) next
		if (cont) { cmd[ncmd] = cmd[ncmd] " " line; sub(/[[:space:]]*\\$/, "", cmd[ncmd])
			    cont = (line ~ /\\$/); next }
		t = line; sub(/^[[:space:]]*\$ /, "", t); sub(/^[[:space:]]+/, "", t)
		split(t, w, /[[:space:]]+/)
		if (t ~ /^(dratopo|dratopo-agent|dratopo-coordinator|build\/bin\/dratopo[a-z-]*)([[:space:]]|$)/ &&
		    w[2] !~ /:$/ && w[3] !~ /:$/ && w[4] !~ /:$/ && w[2] !~ /^[0-9(]/ && w[3] !~ /^\(/) {
			cmd[++ncmd] = t; cl[ncmd] = NR; fails[ncmd] = 0
			cont = (t ~ /\\$/); if (cont) sub(/[[:space:]]*\\$/, "", cmd[ncmd])
		} else if (ncmd && t ~ /^(dratopo[a-z-]*|Error|error|ERROR)[a-z -]*: / && t !~ /^dratopo[a-z-]* [a-z]/) {
			fails[ncmd] = 1
		} else if (ncmd && t ~ /^dratopo[a-z-]*( [a-z-]+)?( [a-z-]+)?: /) {
			fails[ncmd] = 1
		}
	}
	/^[[:space:]]*$/ { prev_blank_text = 1 } !/^[[:space:]]*$/ { prev_blank_text = 0 }
	END { flush_block() }' "$1"
}

why_skip() {   # why_skip COMMAND: a reason, or nothing
	case "$1" in
	*kubectl*|*systemctl*|*docker*|*apt-get*|*cmake*|*tools/dev*|*npm*) echo "needs a cluster, root or the network"; return ;;
	*--coordinator*) echo "needs a running coordinator"; return ;;
	*' &'|*'&&'*|dratopo-coordinator*|*'dratopo-agent run'*) echo "starts a daemon"; return ;;
	*'...'*|*'…'*) echo "a form with ..."; return ;;
	*'─'*|*'│'*|*'┘'*) echo "a diagram"; return ;;
	esac
	if printf '%s' "$1" | grep -Eq '(^|[^A-Za-z0-9_-])[A-Z][A-Z_]*([^A-Za-z0-9_]|$)'; then
		echo "placeholders"; return
	fi
	if printf '%s' "$1" | grep -Eq '(^| )-f (app|claims|cluster|nodepool|ec2nodeclass|pods|pod-claims|p7)\.yaml|--hwdb-extra (p7|extra)\.yaml|>'; then
		echo "an illustrative file of the reader's"; return
	fi
}

for doc in README.md docs/*.md; do
	# Paths the docs promise.
	for p in $(grep -Eo '(examples|tests/fixtures)/[A-Za-z0-9_./-]+\.(yaml|yml|json|sh)' "$doc" | sort -u); do
		[ -e "$p" ] || fail "$doc names $p, which does not exist"
	done
	while IFS=$'\t' read -r line cmd expect_fail; do
		cmd=$(printf '%s' "$cmd" | sed -E 's/[[:space:]]+#[[:space:]].*$//')
		reason=$(why_skip "$cmd")
		if [ -n "$reason" ]; then
			skipped=$((skipped + 1))
			continue
		fi
		run=${cmd#build/bin/}
		timeout 60 bash -c "$run" >"$TMP/out" 2>"$TMP/err" </dev/null
		rc=$?
		ran=$((ran + 1))
		[ -n "${DOCS_VERBOSE:-}" ] && echo "ran ($rc): $doc:$line: $cmd" >&2
		bad=""
		case $rc in
		0|3|4|5) ;;
		1|2) [ "$expect_fail" = 1 ] || bad="exit $rc" ;;
		*) bad="exit $rc" ;;
		esac
		if grep -Eq 'No such file|cannot open|unknown option|unrecognized option|unexpected argument|command not found' "$TMP/err"; then
			bad="${bad:+$bad, }$(grep -Em1 'No such file|cannot open|unknown option|unrecognized option|unexpected argument|command not found' "$TMP/err")"
		fi
		[ -z "$bad" ] || fail "$doc:$line: $cmd: $bad: $(head -c 300 "$TMP/err")"
	done < <(commands "$doc")
done
[ "$ran" -ge 20 ] || fail "only $ran commands ran: the extraction lost the docs' examples"
e2e_finish "$ran commands run, $skipped left out (cluster, coordinator, placeholders)"
