# Sourced by the GPU scripts (gpu_session.sh, gpu_recheck.sh): `part NAME CAP COMMAND...` runs
# COMMAND under a time cap with its whole output in $OUT/NAME.log, and prints the log's last
# ${PART_TAIL:-25} lines and the exit status.
part() {
  local name=$1 cap=$2
  shift 2
  echo "=== $name (cap ${cap}s) $(date +%T)"
  timeout -k 5 "$cap" "$@" >"$OUT/$name.log" 2>&1
  local rc=$?
  tr '\r' '\n' <"$OUT/$name.log" | grep -av '^\s*$' | tail -n "${PART_TAIL:-25}"
  echo "=== $name rc=$rc $(date +%T)"
}
