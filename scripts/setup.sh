#!/usr/bin/env bash
# Installs what qvl needs to build and test on Debian/Ubuntu, and nothing that is
# already there. Safe to run again: it only calls apt-get when a package is missing.
set -euo pipefail

packages=(
  build-essential cmake pkg-config git ca-certificates
  libgtest-dev libgmock-dev libbenchmark-dev
  nlohmann-json3-dev libcpp-httplib-dev libcli11-dev
  libpcre2-dev libutf8proc-dev
  libjpeg62-turbo-dev libpng-dev libwebp-dev libgif-dev zlib1g-dev
  libavformat-dev libavcodec-dev libswscale-dev libavutil-dev
  libcurl4-openssl-dev libssl-dev
  libdnnl-dev
  clang libclang-rt-dev
  python3-pil python3-numpy python3-yaml python3-kubernetes
  redis-server libhiredis-dev nginx-light
  chromium
)
# make test's arm stage compiles for aarch64 elsewhere and runs the kernel tests under
# qemu (on an ARM machine the build is one). googletest: GoogleTest's sources, built for
# aarch64 there.
[ "$(uname -m)" = aarch64 ] || packages+=(g++-aarch64-linux-gnu qemu-user googletest)
# The web page builds with Node.js + npm; a Node.js that is already there (for example
# from NodeSource, which bundles npm) is used as it is.
command -v npm >/dev/null || packages+=(nodejs npm)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "setup: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
    sudo="sudo"
  fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
