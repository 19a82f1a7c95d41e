#!/usr/bin/env bash
# Installs those of the given Debian packages that are missing (apt, as root or with sudo);
# "node" stands for nodejs + npm and is skipped where a node is already on PATH (a Node.js
# from elsewhere conflicts with Debian's npm).
#   bash scripts/apt-install-missing.sh TAG PACKAGE...   (TAG prefixes the messages)
set -euo pipefail
tag=$1
shift
missing=()
for p in "$@"; do
  if [ "$p" = node ]; then
    command -v node >/dev/null || missing+=(nodejs)
    command -v npm >/dev/null || missing+=(npm)
    continue
  fi
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -gt 0 ] || exit 0
echo "[$tag] installing: ${missing[*]}" >&2
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >&2 || echo "[$tag] warning: apt-get update reported errors (continuing)" >&2
$SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
