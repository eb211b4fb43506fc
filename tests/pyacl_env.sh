# Sourced by the tests of `import acl`: the module and library of this
# build tree on the paths, or exit 77 (skip) when configure did not build
# them.  In a sanitizer build the interpreter is not instrumented, so the
# ASan runtime must be preloaded to load the module; Python's own
# allocations would be reported as leaks at exit, so leak checking is off
# there.
if [ ! -f python/.libs/acl.so ]; then
	echo "SKIP: python/acl.so was not built (install python3-dev and re-run configure)"
	exit 77
fi
if ! /usr/bin/python3 -c 'import numpy' > /dev/null 2>&1; then
	echo "SKIP: /usr/bin/python3 has no numpy (apt-get install python3-numpy)"
	exit 77
fi
PYTHONPATH="$PWD/python/.libs${PYTHONPATH:+:$PYTHONPATH}"
LD_LIBRARY_PATH="$PWD/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PYTHONPATH LD_LIBRARY_PATH
# pyacl_python ARGS...: /usr/bin/python3 for scripts that import acl; only
# they get the preload (torch, for one, aborts under it).
pyacl_preload=
case "${DV_LDFLAGS:-}" in
*sanitize=address*) pyacl_preload=$(${CC:-cc} -print-file-name=libasan.so) ;;
esac
pyacl_python() {
	if [ -n "$pyacl_preload" ]; then
		LD_PRELOAD="$pyacl_preload" ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
			/usr/bin/python3 "$@"
	else
		/usr/bin/python3 "$@"
	fi
}
