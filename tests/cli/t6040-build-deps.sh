#!/bin/sh
# t6040-build-deps.sh - tests/deps.sh, which `make` runs before compiling
# anything: with every header there it says nothing; with one missing (here:
# a compiler that finds no xxhash.h) and no permission to install
# (GPUREDUCE_NO_INSTALL=1, as a non-root user would be), it stops with one
# line naming the exact apt-get command.  `make gpu-test NO_BUILD=1` (a GPU
# machine without libyaml's headers and no package registry) never runs it.
. tests/cli/test-lib.sh

export GPUREDUCE_NO_INSTALL=1
check "all there: exit 0" sh tests/deps.sh build
if [ -s "$TMP/.out" ]; then fail "  ...but it printed something"; else ok "  ...silently"; fi

# a compiler that finds every header but xxhash.h (deps.sh pipes
# "#include <HEADER>" into `$CC -E -x c -`)
cat > "$TMP/cc-noxx" <<EOT
#!/bin/sh
case \$(cat) in *xxhash.h*) exit 1 ;; *) exit 0 ;; esac
EOT
chmod +x "$TMP/cc-noxx"
check_exit "xxhash.h missing: exit 1" 1 env CC="$TMP/cc-noxx" sh tests/deps.sh build
check_grep "  ...one line with the command to run" \
	"missing build dependencies; run: .*apt-get install -y --no-install-recommends libxxhash-dev$" "$TMP/.out"
if [ "$(wc -l < "$TMP/.out")" -eq 1 ]; then ok "  ...just that line"; else fail "  ...$(wc -l < "$TMP/.out") lines"; fi
check_exit "no compiler at all: exit 1" 1 env CC=/nonexistent/cc sh tests/deps.sh build
check_grep "  ...asks for build-essential" "install -y --no-install-recommends build-essential" "$TMP/.out"
check_exit "no CUDA headers: exit 1" 1 env CUDA=/nonexistent sh tests/deps.sh build
check_grep "  ...says where it looked" "not in /nonexistent/include (cuda.h)" "$TMP/.out"

# make wires it in: before any compile for make/test/demo, never for NO_BUILD
check "make -n test" make -n BUILD="$TMP/nobuild" test
check_grep "  ...runs deps.sh first" "tests/deps.sh build" "$TMP/.out"
first=$(grep -n -m1 -e 'deps.sh build' "$TMP/.out" | cut -d: -f1)
cc1=$(grep -n -m1 -e ' -c -o ' "$TMP/.out" | cut -d: -f1)
if [ -n "$first" ] && [ -n "$cc1" ] && [ "$first" -lt "$cc1" ]; then ok "  ...before the first compile"; else fail "  ...not before the first compile ($first, $cc1)"; fi
check "make -n demo" make -n BUILD="$TMP/nobuild" demo
check_grep "  ...runs deps.sh" "tests/deps.sh build" "$TMP/.out"
check "make -n gpu-test NO_BUILD=1" make -n gpu-test NO_BUILD=1
if grep -q "deps.sh" "$TMP/.out"; then fail "  ...runs deps.sh (it must not block NO_BUILD runs)"; else ok "  ...does not run deps.sh"; fi
finish
