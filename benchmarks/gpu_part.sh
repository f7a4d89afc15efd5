# Sourced by the GPU scripts (gpu_session.sh, gpu_recheck.sh, gpu_distill.sh): `part NAME CAP
# COMMAND...` runs COMMAND under a time cap with its whole output in $OUT/NAME.log (or, with
# PART_LOG set, appended to that one file: a call returns at most 8 files from OUT), prints
# the output's last ${PART_TAIL:-25} lines and the exit status, and returns that status.
part() {
  local name=$1 cap=$2 start
  shift 2
  start="=== $name (cap ${cap}s) $(date +%T)"
  echo "$start"
  local tmp="$OUT/.part.$name.tmp"
  timeout -k 5 "$cap" "$@" >"$tmp" 2>&1
  local rc=$?
  local end="=== $name rc=$rc $(date +%T)"
  tr '\r' '\n' <"$tmp" | grep -av '^\s*$' | tail -n "${PART_TAIL:-25}"
  if [ -n "${PART_LOG:-}" ]; then
    { echo "$start"; tr '\r' '\n' <"$tmp" | grep -av '^\s*$'; echo "$end"; } >>"$PART_LOG"
    rm -f "$tmp"
  else
    mv "$tmp" "$OUT/$name.log"
  fi
  echo "$end"
  return $rc
}
