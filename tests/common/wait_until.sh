# Shell twin of tests/common/wait_until.h: the one place shell tests and
# scripts poll. Source it; wait on what you need, never for a fixed time.

# wait_until TIMEOUT_S COMMAND [ARGS...]: runs COMMAND every 0.1 s until it
# succeeds (returns 0) or TIMEOUT_S seconds have passed (returns 1; COMMAND is
# run once more at the deadline).
wait_until() {
  local timeout_s=$1
  shift
  local deadline=$((SECONDS + timeout_s))
  until "$@"; do
    if [ "$SECONDS" -ge "$deadline" ]; then
      "$@"
      return
    fi
    sleep 0.1
  done
}

# http_ok URL: true when GET URL answers 2xx within a second.
http_ok() {
  curl -fs -o /dev/null --max-time 1 "$1"
}

# gone PID...: true when none of the processes (or, for -PGID, groups) exists.
gone() {
  local pid
  for pid in "$@"; do
    if kill -0 -- "$pid" 2>/dev/null; then return 1; fi
  done
}
