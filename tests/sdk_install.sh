#!/bin/sh
# The installable SDK end to end: make install into a scratch DESTDIR, then
# build examples/acl_sample.c (an unmodified ACL-style program including
# "acl/acl.h") with nothing but pkg-config pointed at that tree, and run it
# on the small CNN of tests/acl_model.py with the installed SoC files: its
# top-5 must be PyTorch's.  Also what a user relies on: the headers and the
# library's exported symbols (acl* only).
set -u
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
root="$tmp/root"

if ! ${MAKE:-make} install DESTDIR="$root" > "$tmp/install.log" 2>&1; then
	cat "$tmp/install.log"
	echo "FAIL: make install DESTDIR=$root"
	exit 1
fi
# the installed tree's paths, from the .pc file itself
pc=$(find "$root" -name davinci-acl.pc | head -1)
[ -n "$pc" ] && ok || { echo "FAIL: no davinci-acl.pc installed"; exit 1; }
export PKG_CONFIG_PATH="$(dirname "$pc")" PKG_CONFIG_SYSROOT_DIR="$root"
# var NAME: a .pc variable inside $root (pkgconf prefixes the sysroot, pkg-config does not)
var() { v=$(pkg-config --variable="$1" davinci-acl); echo "$root${v#"$root"}"; }
libdir=$(var libdir)
incdir=$(var includedir)
socdir=$(var socdir)
for h in acl.h acl_rt.h acl_mdl.h; do
	[ -f "$incdir/acl/$h" ] && ok || bad "$incdir/acl/$h not installed"
done
[ -f "$socdir/Ascend310.ini" ] && ok || bad "$socdir/Ascend310.ini not installed"
# a man page per tool (help2man, when configure found it), from its --help
if [ -f simrun.1 ]; then
	for t in simas simatc simdis simprof simquant simrun simserve simsweep; do
		m=$(find "$root" -path "*/man1/$t.1" | head -1)
		[ -n "$m" ] && grep -q "^\.SH NAME" "$m" && grep -q "^\.TH .*davinci-sim [0-9]" "$m" && ok ||
			bad "man page $t.1 not installed (or without NAME and the version)"
	done
fi
# only the API is exported: nothing of the simulator's internals
others=$(nm -D --defined-only "$libdir/libdavinci-acl.so" | awk '{print $3}' | grep -v '^acl' | tr '\n' ' ')
[ -z "$others" ] && ok || bad "libdavinci-acl.so exports non-ACL symbols: $others"

# `import acl` from the installed tree, when configure built it
if [ -f python/.libs/acl.so ]; then
	mod=$(find "$root" -name acl.so | head -1)
	case "$mod" in
	*/dist-packages/acl.so | */site-packages/acl.so) ok ;;
	*) bad "acl.so installed as '$mod'" ;;
	esac
	preload= # a sanitizer build's library needs the ASan runtime first (tests/pyacl_env.sh)
	case "${DV_LDFLAGS:-}" in *sanitize=address*) preload=$(${CC:-cc} -print-file-name=libasan.so) ;; esac
	PYTHONPATH=$(dirname "$mod") LD_LIBRARY_PATH="$libdir" DAVINCI_SOC_DIR="$socdir" \
		LD_PRELOAD=$preload ASAN_OPTIONS=detect_leaks=0 /usr/bin/python3 -c 'import acl, sys; sys.exit(acl.init() or acl.get_soc_name() != "Ascend310")' \
		> "$tmp/py.log" 2>&1 && ok || bad "import acl from $mod: $(cat "$tmp/py.log")"
fi

# The sample, as a user builds it.  A sanitizer build's library needs its
# runtime linked first ($DV_LDFLAGS is empty otherwise).
${CC:-cc} -std=c11 -Wall -Wextra -Werror "$srcdir/examples/acl_sample.c" \
	$(pkg-config --cflags --libs davinci-acl) ${DV_LDFLAGS:-} -o "$tmp/acl_sample" \
	> "$tmp/cc.log" 2>&1 && ok || { cat "$tmp/cc.log"; bad "building acl_sample"; }

if ! /usr/bin/python3 -c 'import torch, onnx' > /dev/null 2>&1; then
	echo "$pass passed, $fail failed (no torch or onnx: the model run skipped)"
	[ "$fail" -eq 0 ]
	exit $?
fi
if ! /usr/bin/python3 "$srcdir/tests/acl_model.py" "$tmp" > "$tmp/gen.log" 2>&1 ||
	! ./simatc --model="$tmp/model.onnx" --framework=5 --output="$tmp/cnn" \
		--soc_version=Ascend310 > "$tmp/atc.log" 2>&1; then
	cat "$tmp/gen.log" "$tmp/atc.log"
	echo "FAIL: making the model"
	exit 1
fi
# the installed library with the installed SoC files, nothing of the build tree
if LD_LIBRARY_PATH="$libdir" DAVINCI_SOC_DIR="$socdir" DAVINCI_SOC= \
	"$tmp/acl_sample" "$tmp/cnn.om" "$tmp/input.bin" > "$tmp/out" 2> "$tmp/err"; then
	ok
else
	bad "acl_sample: $(cat "$tmp/err")"
fi
grep -q '^chip Ascend310$' "$tmp/out" && ok || bad "chip: $(head -1 "$tmp/out")"
got=$(sed -n 's/^#[1-5] class \([0-9]*\) .*/\1/p' "$tmp/out" | tr '\n' ' ')
want=$(cut -d' ' -f1 "$tmp/expected.txt" | tr '\n' ' ')
[ -n "$got" ] && [ "$got" = "$want" ] && ok || bad "top-5 '$got', PyTorch says '$want'"
LD_LIBRARY_PATH="$libdir" ldd "$tmp/acl_sample" | grep -q "$libdir/libdavinci-acl.so" && ok ||
	bad "acl_sample does not use the installed library: $(ldd "$tmp/acl_sample")"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
