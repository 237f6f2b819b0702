#!/usr/bin/env bash
# image.sh BUILD_DIR - deploy/Dockerfile and tools/dev agree, with no container
# engine: the image takes its Debian packages only through tools/dev from the
# one list (tools/debian-packages), build set in the build stage and run set
# in the runtime stage; the run set is exactly the packages that own the
# libraries the three built programs link (nothing missing, nothing extra);
# the build stage builds every program the project installs and every
# program deploy/ runs; the image runs as a non-root user; no other file
# keeps a package list. (`tools/dev image-check` runs the Dockerfile's steps
# for real in debootstrapped Debian 12 roots: too slow for every build.)
NAME=image; . "$(dirname "$0")/lib.sh"
DF="$ROOT/deploy/Dockerfile"
LIST="$ROOT/tools/debian-packages"

# ---- The Dockerfile asks tools/dev, never apt-get, for packages ----------
joined=$(sed -e '/^[[:space:]]*#/d' "$DF" | awk '{ if (sub(/\\[[:space:]]*$/, "")) { b = b $0; next } print b $0; b = "" }')
printf '%s\n' "$joined" | grep -Eq 'apt-get[[:space:]]+install|apt[[:space:]]+install|dpkg[[:space:]]+-i' &&
	fail "Dockerfile: installs packages itself instead of through tools/dev install-packages"
stages=$(printf '%s\n' "$joined" | grep -c '^FROM ')
[ "$stages" = 2 ] || fail "Dockerfile: 2 stages (build, runtime), found $stages"
# Per stage: the install-packages sets, in order.
sets=$(printf '%s\n' "$joined" | awk '/^FROM /{ s++ } /tools\/dev install-packages/{
	sub(/.*tools\/dev install-packages[[:space:]]*/, ""); sub(/[[:space:]]*&&.*/, ""); print s ": " $0 }')
[ "$sets" = "$(printf '1: build\n2: run')" ] ||
	fail "Dockerfile: the build stage installs tools/dev's build set, the runtime stage its run set (found: $sets)"
for st in 1 2; do
	printf '%s\n' "$joined" | awk -v s=$st '/^FROM /{ n++ } n == s' |
		grep -Eq '^COPY .*tools/dev .*tools/debian-packages' ||
		fail "Dockerfile stage $st: copies tools/dev and tools/debian-packages before installing"
done

# ---- It builds what the project installs and what deploy/ runs ------------
targets=$(printf '%s\n' "$joined" | sed -n 's/.*--target \([a-z -]*[a-z]\).*/\1/p' | tr ' ' '\n' | sort)
installed=$(grep -h 'install(TARGETS' "$ROOT"/*/CMakeLists.txt "$ROOT"/*/*/CMakeLists.txt |
	sed 's/.*install(TARGETS \([a-z-]*\).*/\1/' | sort)
[ "$targets" = "$installed" ] ||
	fail "Dockerfile builds [$(echo $targets)], the project installs [$(echo $installed)]"
for prog in $(grep -ho 'command: \["[a-z/-]*"' "$ROOT"/deploy/*.yaml | sed 's/.*\["\(.*\)"/\1/' | sort -u); do
	case "$prog" in /bin/sh) continue ;; esac
	printf '%s\n' "$targets" | grep -qx "$prog" || fail "deploy/ runs $prog, which the image lacks"
done
last_user=$(printf '%s\n' "$joined" | sed -n 's/^USER[[:space:]]*//p' | tail -n 1)
case "$last_user" in ""|root|0|0:*) fail "Dockerfile: the image runs as root (USER '$last_user')" ;; esac
printf '%s\n' "$joined" | grep -q "useradd .*--uid ${last_user%%:*}" ||
	fail "Dockerfile: USER $last_user is not a user the image creates"

# ---- The run set is what the programs load ----------------------------------
set_of() { "$ROOT/tools/dev" packages "$1" | sort; }
run_set=$(set_of run)
paths=""
for prog in dratopo dratopo-agent dratopo-coordinator; do
	f="$1/bin/$prog"
	[ -x "$f" ] || { fail "$f not built"; continue; }
	for lib in $(readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
		path=$(ldconfig -p | awk -v l="$lib" '$1 == l { print $NF; exit }')
		[ -n "$path" ] || { fail "$prog: $lib not found by ldconfig"; continue; }
		# dpkg knows a file by the path its package shipped: /lib or /usr/lib.
		paths="$paths $path /usr${path#/usr} $(readlink -f "$path")"
	done
done
owners=$(dpkg -S $(printf '%s\n' $paths | sort -u) 2>/dev/null)
needed=""
for lib in $(printf '%s\n' $paths | sed 's#.*/##' | sort -u); do
	pkg=$(printf '%s\n' "$owners" | awk -F': ' -v l="$lib" '$2 ~ "/" l "$" { sub(/:.*/, "", $1); print $1; exit }')
	case "$lib" in *.so.*) ;; *) continue ;; esac
	[ -n "$pkg" ] || { printf '%s\n' "$owners" | grep -q "/$lib" || fail "no Debian package owns $lib"; continue; }
	# glibc: every Debian root has it (essential packages depend on it).
	case "$pkg" in libc6|libgcc-s1) continue ;; esac
	needed="$needed $pkg"
done
needed=$(printf '%s\n' $needed | sort -u)
missing=$(comm -13 <(printf '%s\n' "$run_set") <(printf '%s\n' "$needed"))
extra=$(comm -23 <(printf '%s\n' "$run_set") <(printf '%s\n' "$needed"))
[ -z "$missing" ] || fail "tools/debian-packages: the programs load [$(echo $missing)], not in the run set"
[ -z "$extra" ] || fail "tools/debian-packages: run set has [$(echo $extra)], which no program loads"

# ---- tools/dev installs from that list, and nothing else keeps one ---------
for p in $(set_of build) $(set_of test); do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
		fail "tools/dev's package $p is not installed here: tools/dev deps installs its list"
done
grep -q 'packages build test' "$ROOT/tools/dev" || fail "tools/dev: DEB_PACKAGES from tools/debian-packages"
others=$(grep -rlE 'apt-get install[^$]*(libgrpc-dev|libyaml-dev|libmicrohttpd)' "$ROOT"/README.md \
	"$ROOT"/docs "$ROOT"/deploy "$ROOT"/tools "$ROOT"/.ci 2>/dev/null)
[ -z "$others" ] || fail "a second package list in: $others (use tools/dev packages SET)"

# tools/dev refuses a set it does not have.
expect 2 "$ROOT/tools/dev" packages nosuch && has "$TMP/err" 'no package set "nosuch"' "bad set"
e2e_finish
