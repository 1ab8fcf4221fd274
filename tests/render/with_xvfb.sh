#!/bin/sh
# with_xvfb.sh COMMAND [ARGS...]: runs COMMAND under its own Xvfb server and exits with its code.
# Xvfb picks a free display number itself (-displayfd) and reports it once it accepts clients,
# so servers started side by side never race for one number, as `xvfb-run -a` can (its pick by
# looking at lock files once lost a render test's server in a full parallel run).
set -u
dir=$(mktemp -d) || exit 1
mkfifo "$dir/display" || { rm -rf "$dir"; exit 1; }
Xvfb -displayfd 3 -screen 0 "${XVFB_SCREEN:-1280x1024x24}" -nolisten tcp -noreset \
  3>"$dir/display" 2>"$dir/xvfb.log" &
server=$!
stop() { kill "$server" 2>/dev/null; wait "$server" 2>/dev/null; rm -rf "$dir"; }
trap 'stop; exit 130' INT TERM
read -r display < "$dir/display"
if [ -z "${display:-}" ]; then
  echo "with_xvfb.sh: Xvfb did not start:" >&2
  cat "$dir/xvfb.log" >&2
  stop
  exit 1
fi
DISPLAY=":$display" "$@"
code=$?
stop
exit $code
