# Shared by the chat demo (run_chat.sh) and the serve tests (tests/serve/openai_client.sh);
# sourced, not run.

OPENAI_CLIENT=openai@6.49.0

# install_openai_client CACHE: the pinned official openai npm package into CACHE/node_modules
# when missing (no install scripts run; one install at a time under a lock).
install_openai_client() {
  local cache=$1 have
  mkdir -p "$cache"
  (
    flock 9
    have="$(node -p "try { require('$cache/node_modules/openai/package.json').version } catch (e) { '' }" 2>/dev/null || true)"
    if [ "$have" != "${OPENAI_CLIENT##*@}" ]; then
      echo "installing $OPENAI_CLIENT into $cache" >&2
      npm install --prefix "$cache" --ignore-scripts --no-audit --no-fund --loglevel=error "$OPENAI_CLIENT" >&2
    fi
  ) 9> "$cache/.lock"
}

# serve_start LOG XONNX SERVE-ARGS...: starts `XONNX serve SERVE-ARGS --port 0` in the
# background (stderr to LOG) and waits until /health answers 200 (the models are loaded).
# Sets SERVE_PID and SERVE_BASE (http://127.0.0.1:PORT); returns 1 with the log printed if the
# server exits or is not ready within 60 s.
serve_start() {
  local log=$1 xonnx=$2 port="" i
  shift 2
  "$xonnx" serve "$@" --port 0 2>"$log" &
  SERVE_PID=$!
  for i in $(seq 1 300); do
    port="$(sed -n 's|.*http://127.0.0.1:\([0-9]*\)/v1.*|\1|p' "$log" | head -1)"
    [ -n "$port" ] && break
    kill -0 "$SERVE_PID" 2>/dev/null || { echo "xonnx serve exited:" >&2; cat "$log" >&2; return 1; }
    sleep 0.1
  done
  [ -n "$port" ] || { echo "xonnx serve did not start:" >&2; cat "$log" >&2; return 1; }
  SERVE_BASE="http://127.0.0.1:$port"
  for i in $(seq 1 600); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "$SERVE_BASE/health")" = 200 ] && return 0
    kill -0 "$SERVE_PID" 2>/dev/null || break
    sleep 0.1
  done
  echo "xonnx serve was not ready within 60 s:" >&2
  cat "$log" >&2
  return 1
}
