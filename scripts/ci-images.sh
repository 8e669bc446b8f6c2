#!/usr/bin/env bash
# CI: the offline kind node image and the components' images, with the node image kept as a
# docker archive in ~/.cache/zoneproof-node-image between runs (the workflow caches that
# directory by pin). Building needs root (debootstrap), so it runs under sudo, and the
# caches are handed back to the runner's user.
set -euo pipefail

ARCHIVE_DIR="$HOME/.cache/zoneproof-node-image"
ZP=(sudo -E env "PATH=$PATH" "HOME=$HOME" .venv/bin/zoneproof)

if [[ -f "$ARCHIVE_DIR/node-image.tar" ]]; then
  docker load -i "$ARCHIVE_DIR/node-image.tar"
fi
tag=$("${ZP[@]}" build --node-image | sed -n 's/^node image: //p')
if [[ ! -f "$ARCHIVE_DIR/node-image.tar" ]]; then
  mkdir -p "$ARCHIVE_DIR"
  balancer=$(docker images --format '{{.Repository}}:{{.Tag}}' envoyproxy/envoy | head -n 1)
  docker save -o "$ARCHIVE_DIR/node-image.tar" "$tag" ${balancer:+"$balancer"}
fi
"${ZP[@]}" build --images
sudo chown -R "$(id -u):$(id -g)" "$HOME/.cache/zoneproof" "$ARCHIVE_DIR"
