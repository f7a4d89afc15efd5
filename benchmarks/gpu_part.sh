# Sourced by the GPU scripts (gpu_session.sh, gpu_recheck.sh, gpu_distill.sh): `part NAME CAP
# COMMAND...` runs COMMAND under a time cap with its whole output in $OUT/NAME.log (or, with
# PART_LOG set, appended to that one file: a call returns at most 8 files from OUT), prints
# the output's last ${PART_TAIL:-25} lines and the exit status, and returns that status.
part() {
  local name=$1 cap=$2
  shift 2
  local log="${PART_LOG:-$OUT/$name.log}" tmp="$OUT/.part.$name.tmp"
  echo "=== $name (cap ${cap}s) $(date +%T)"
  [ -n "${PART_LOG:-}" ] && echo "=== $name (cap ${cap}s) $(date +%T)" >>"$log"
  timeout -k 5 "$cap" "$@" >"$tmp" 2>&1
  local rc=$?
  if [ -n "${PART_LOG:-}" ]; then
    tr '\r' '\n' <"$tmp" | grep -av '^\s*$' >>"$log"
    echo "=== $name rc=$rc $(date +%T)" >>"$log"
  else
    mv "$tmp" "$log"
    tmp="$log"
  fi
  tr '\r' '\n' <"$tmp" | grep -av '^\s*$' | tail -n "${PART_TAIL:-25}"
  [ "$tmp" = "$log" ] || rm -f "$tmp"
  echo "=== $name rc=$rc $(date +%T)"
  return $rc
}
