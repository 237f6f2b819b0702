#!/bin/bash
# tests/e2e/grammar.sh BUILD_DIR - the one command-line grammar (common/opts)
# in every command of the three programs. Commands are found by walking each
# program's --help (its "commands:" list, nested ones too: dratopo hwdb ...),
# and each command's options by reading its generated --help, so a command or
# an option added later is walked without touching this file.
#
# For every command: -h and --help print the usage on stdout (exit 0); an
# unknown option and -- are answered in the grammar's words. For every option:
# each form (--name=VALUE, --name VALUE, -kVALUE, -k VALUE, -k=VALUE for a
# value; --name, -k for a flag; --name, --name=true|false for a boolean) reads the same, as DRATOPO_OPTS_DUMP=1 shows
# (the parser's own account of what it read, before anything runs); a missing
# value and a value given to a flag are usage errors (exit 2) in one wording,
# followed by the command's synopsis and the pointer to --help.
NAME=grammar
DRIVES="$1/bin/dratopo-coordinator"
. "$(dirname "$0")/lib.sh"
COORD="$1/bin/dratopo-coordinator"
commands=0
options=0

# dump PROG_ARGV...: run with the parser's dump; output in $TMP/out.
dump() {
	DRATOPO_OPTS_DUMP=1 expect 0 "$@"
}

# usage_error WANT PROG_NAME ARGV...: exit 2, stderr is WANT, the synopsis,
# the pointer to --help; nothing on stdout.
usage_error() {
	local want="$1" prog="$2"
	shift 2
	expect 2 "$@" || return
	[ "$(head -1 "$TMP/err")" = "$prog: $want" ] ||
		fail "$*: first line '$(head -1 "$TMP/err")', want '$prog: $want'"
	sed -n 2p "$TMP/err" | grep -q "^usage: $prog" || fail "$*: no synopsis after the message"
	[ "$(tail -1 "$TMP/err")" = "Run '$prog --help' for the options." ] ||
		fail "$*: last line '$(tail -1 "$TMP/err")'"
	[ -s "$TMP/out" ] && fail "$*: printed on stdout"
}

# dumped WANT ARGV...: the dump of ARGV is exactly WANT.
dumped() {
	local want="$1"
	shift
	dump "$@" || return
	[ "$(cat "$TMP/out")" = "$want" ] || fail "$*: read as '$(tr '\n' ' ' <"$TMP/out")', want '$want'"
}

# walk_option PROG_NAME SHORT LONG ARG CMD...: every form of one option.
walk_option() {
	local prog="$1" k="$2" name="$3" arg="$4"
	shift 4
	options=$((options + 1))
	if [ "$arg" = "[=BOOL]" ]; then
		# client-go's booleans: bare is true, a value only after '='
		dumped "--$name" "$@" "--$name"
		dumped "--$name=false" "$@" "--$name=false"
		dumped "--$name=true" "$@" "--$name=true"
		usage_error "--$name: 'x' is neither true nor false" "$prog" "$@" "--$name=x"
	elif [ -n "$arg" ]; then
		dumped "--$name=v=1" "$@" "--$name=v=1"
		dumped "--$name=v=1" "$@" "--$name" "v=1"
		dumped "--$name=-v" "$@" "--$name" "-v"      # the next argument, whatever it is
		dumped "--$name=" "$@" "--$name="
		usage_error "option '--$name' needs a value" "$prog" "$@" "--$name"
		if [ -n "$k" ]; then
			dumped "--$name=v" "$@" "-${k}v"
			dumped "--$name=v" "$@" "-$k" v
			dumped "--$name=v" "$@" "-$k=v"
			usage_error "option '-$k' needs a value" "$prog" "$@" "-$k"
		fi
	else
		dumped "--$name" "$@" "--$name"
		usage_error "option '--$name' takes no value" "$prog" "$@" "--$name=x"
		if [ -n "$k" ]; then
			dumped "--$name" "$@" "-$k"
			dumped "$(printf -- '--%s\n--%s' "$name" "$name")" "$@" "-$k$k"   # bundled
		fi
	fi
}

# walk_command PROG_NAME CMD...: help, errors, and every option of one command.
walk_command() {
	local prog="$1" line k name arg n=0
	shift
	commands=$((commands + 1))
	for h in -h --help; do
		expect 0 "$@" "$h" || continue
		head -1 "$TMP/out" | grep -q "^usage: $prog\b" || fail "$* $h: no 'usage: $prog' line"
		has "$TMP/out" "^  -h, --help +print this help$" "$* $h lists -h, --help"
		[ -s "$TMP/err" ] && fail "$* $h: printed on stderr"
		[ "$(awk 'length > 90' "$TMP/out" | wc -l)" = 0 ] || fail "$* $h: lines over 90 columns"
	done
	cp "$TMP/out" "$TMP/help"
	usage_error "unknown option '--no-such-option'" "$prog" "$@" --no-such-option
	# -- ends the options: --help after it is an operand, never the help
	DRATOPO_OPTS_DUMP=1 timeout 60 "$@" -- --help >"$TMP/out" 2>"$TMP/err"
	grep -q "^usage:" "$TMP/out" && fail "$* -- --help: printed the help"
	grep -Eq "^operand=--help$|^$prog: unexpected argument '--help'" "$TMP/out" "$TMP/err" ||
		fail "$* -- --help: not read as an operand"
	# the option lines of the generated help: "  -k, --name ARG", "      --name ARG"
	# or a boolean's "      --name[=BOOL]"
	local row='^  (-([a-zA-Z]), |    )--([a-z0-9-]+)(\[=BOOL\])?( ([^ ]+))?'
	while IFS= read -r line; do
		[[ "$line" =~ $row ]] || continue
		k="${BASH_REMATCH[2]}" name="${BASH_REMATCH[3]}" arg="${BASH_REMATCH[4]}${BASH_REMATCH[6]}"
		[ "$name" = help ] && continue
		walk_option "$prog" "$k" "$name" "$arg" "$@"
		n=$((n + 1))
	done <"$TMP/help"
	[ "$n" -gt 0 ] || grep -q "^options:" "$TMP/help" || fail "$*: no options section"
}

# walk_program PROG_NAME CMD...: the commands a program lists, recursively.
walk_program() {
	local prog="$1" sub subs
	shift
	expect 0 "$@" --help || return
	head -1 "$TMP/out" | grep -q "^usage: $prog COMMAND" || { walk_command "$prog" "$@"; return; }
	subs=$(awk '/^commands:$/ { on = 1; next } on && /^$/ { exit }
		    on && /^  [a-z]/ { print $1 }' "$TMP/out")
	expect 0 "$@" -h && has "$TMP/out" "^commands:$" "$* -h"
	expect 2 "$@" no-such-command && has "$TMP/err" "^$prog: unknown command 'no-such-command'$" \
		"$prog: unknown command"
	expect 2 "$@" && has "$TMP/err" "^$prog: a command is needed$" "$prog: no command"
	for sub in $subs; do
		walk_program "$prog $sub" "$@" "$sub"
	done
}

walk_program dratopo "$BIN"
walk_program dratopo-agent "$AGENT"
walk_program dratopo-coordinator "$COORD"

# QA-93: what nodes prints instead of the node list takes no -o json and
# no filter (they were silently ignored: YAML came out of --lifts -o json).
R="--coordinator 127.0.0.1:1 --insecure"
usage_error "--lifts prints no JSON (no -o with it)" "dratopo nodes" "$BIN" nodes $R --lifts -ojson
usage_error "--forget prints no JSON (no -o with it)" "dratopo nodes" "$BIN" nodes $R --forget n -o json
usage_error "--type and --verdict filter the node list, not -o yaml" "dratopo nodes" \
	"$BIN" nodes $R -o yaml --type p5.48xlarge
usage_error "--type and --verdict filter the node list, not --lifts" "dratopo nodes" \
	"$BIN" nodes $R --lifts --verdict=drift

# The walk reached every command the README documents: dratopo's validate,
# cel eval, hwdb list/show/export, allocate, plan, nodes, types; the agent's
# probe, verify, slices, run; the coordinator.
[ "$commands" -ge 14 ] || fail "walked only $commands commands"

e2e_finish "$commands commands, $options options"
