#!/usr/bin/env bash
# Docker engine for the kind backend on a Debian machine: install, adapt, start. Idempotent; run as root.
#
#   sudo scripts/setup-docker.sh          # install what is missing, start dockerd if it is not running
#   scripts/setup-docker.sh --check       # only say what would be done
#
# What it does, each step only when needed:
#   1. installs Debian's docker.io (dockerd, containerd, runc), debootstrap (for
#      `zoneproof build node-image`) and jq, if missing;
#   2. if the kernel's capability bounding set lacks CAP_SYS_RESOURCE (read from
#      /proc/self/status CapBnd; some VM sandboxes drop it), `docker run --privileged` fails
#      with "unable to apply caps: operation not permitted". Then it installs a runtime wrapper
#      next to runc that removes CAP_SYS_RESOURCE from the OCI bundle's config.json (create/run)
#      and from the --process file (exec), and makes it dockerd's default runtime;
#   3. raises fs.inotify.max_user_instances/max_user_watches when below what multi-node kind
#      clusters need (every node's kubelet, systemd and containerd take inotify instances;
#      at the kernel default of 128, the 4th or 5th node's kubelet dies with
#      "inotify_init: too many open files");
#   4. starts dockerd when no daemon answers: through systemd when systemd is PID 1, else
#      detached with its log in /var/log/dockerd.log, and waits (bounded) for `docker info`.
#
# This is a property of the machine, not of zoneproof: zoneproof itself only runs plain
# `docker` and `kind`.
set -euo pipefail

CHECK_ONLY=0
[[ "${1:-}" == "--check" ]] && CHECK_ONLY=1

WRAPPER=/usr/local/sbin/runc-drop-sys-resource
RUNTIME_NAME=runc-drop-sys-resource
DAEMON_JSON=/etc/docker/daemon.json
DOCKERD_LOG=/var/log/dockerd.log
WAIT_S=${ZONEPROOF_DOCKER_WAIT_S:-60}
CAP_SYS_RESOURCE_BIT=24

say() { echo "setup-docker: $*"; }
die() { echo "setup-docker: error: $*" >&2; exit 1; }

if [[ $CHECK_ONLY -eq 0 && $(id -u) -ne 0 ]]; then
    die "must run as root (apt-get, /etc/docker, dockerd): sudo $0"
fi

# --- 1. packages ---------------------------------------------------------------------------
missing=()
command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
command -v jq >/dev/null 2>&1 || missing+=(jq)
if ((${#missing[@]})); then
    if [[ $CHECK_ONLY -eq 1 ]]; then
        say "would install: ${missing[*]}"
    else
        say "installing ${missing[*]} from Debian"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -q || die "apt-get update failed: check the Debian mirror in /etc/apt/sources.list*"
        # --no-install-recommends: no apparmor/cgroupfs-mount/git; iptables comes as a dependency.
        apt-get install -y -q --no-install-recommends "${missing[@]}" \
            || die "apt-get install ${missing[*]} failed"
    fi
else
    say "docker.io, debootstrap and jq are installed"
fi

# --- 2. CAP_SYS_RESOURCE -------------------------------------------------------------------
capbnd=$(awk '/^CapBnd:/ {print $2}' /proc/self/status)
[[ -n "$capbnd" ]] || die "cannot read CapBnd from /proc/self/status"
need_wrapper=0
if (( ((16#$capbnd) >> CAP_SYS_RESOURCE_BIT) & 1 )); then
    say "capability bounding set $capbnd has CAP_SYS_RESOURCE: plain runc works, no wrapper"
else
    need_wrapper=1
    say "capability bounding set $capbnd lacks CAP_SYS_RESOURCE: privileged containers need the runc wrapper"
fi

write_wrapper() {
    local runc
    runc=$(command -v runc) || die "runc not found (it comes with docker.io)"
    mkdir -p "$(dirname "$WRAPPER")"
    cat >"$WRAPPER.tmp" <<EOF
#!/bin/sh
# Installed by zoneproof scripts/setup-docker.sh: the kernel's capability bounding set lacks
# CAP_SYS_RESOURCE, so runc cannot grant it; drop it from what the engine asks for, then run runc.
set -eu
RUNC=$runc
EOF
    cat >>"$WRAPPER.tmp" <<'EOF'
cmd="" bundle="" process="" prev=""
for arg in "$@"; do
    case "$prev" in
        --bundle|-b) bundle=$arg ;;
        --process|-p) process=$arg ;;
    esac
    case "$arg" in
        --bundle=*) bundle=${arg#--bundle=} ;;
        --process=*) process=${arg#--process=} ;;
    esac
    if [ -z "$cmd" ]; then
        case "$arg" in create|run|exec) cmd=$arg ;; esac
    fi
    prev=$arg
done
strip() { # $1 file, $2 jq path of the capabilities object
    [ -f "$1" ] || return 0
    tmp="$1.zp-tmp"
    jq "if $2 then $2 |= with_entries(.value |= map(select(. != \"CAP_SYS_RESOURCE\"))) else . end" \
        "$1" >"$tmp" && mv "$tmp" "$1"
}
case "$cmd" in
    create|run) strip "${bundle:-.}/config.json" ".process.capabilities" ;;
    exec) [ -n "$process" ] && strip "$process" ".capabilities" ;;
esac
exec "$RUNC" "$@"
EOF
    chmod 0755 "$WRAPPER.tmp"
    mv "$WRAPPER.tmp" "$WRAPPER"
}

write_daemon_json() {
    mkdir -p "$(dirname "$DAEMON_JSON")"
    local current='{}'
    [[ -s "$DAEMON_JSON" ]] && current=$(cat "$DAEMON_JSON")
    jq --arg name "$RUNTIME_NAME" --arg path "$WRAPPER" \
        '.runtimes[$name] = {path: $path} | ."default-runtime" = $name' <<<"$current" >"$DAEMON_JSON.tmp"
    mv "$DAEMON_JSON.tmp" "$DAEMON_JSON"
}

config_changed=0
if [[ $need_wrapper -eq 1 ]]; then
    if [[ $CHECK_ONLY -eq 1 ]]; then
        [[ -x "$WRAPPER" ]] || say "would install $WRAPPER"
        jq -e --arg n "$RUNTIME_NAME" '."default-runtime" == $n' "$DAEMON_JSON" >/dev/null 2>&1 \
            || say "would register $RUNTIME_NAME as the default runtime in $DAEMON_JSON"
    else
        before=$({ cat "$WRAPPER" "$DAEMON_JSON" 2>/dev/null || true; } | sha256sum)
        write_wrapper
        write_daemon_json
        after=$({ cat "$WRAPPER" "$DAEMON_JSON" 2>/dev/null || true; } | sha256sum)
        [[ "$before" == "$after" ]] || config_changed=1
        say "runtime wrapper $WRAPPER is dockerd's default runtime ($DAEMON_JSON)"
    fi
fi

# --- 3. inotify limits ----------------------------------------------------------------------
raise_sysctl() { # $1 key, $2 minimum
    local current
    current=$(sysctl -n "$1" 2>/dev/null || echo 0)
    if ((current < $2)); then
        if [[ $CHECK_ONLY -eq 1 ]]; then
            say "would raise $1 from $current to $2"
        else
            sysctl -qw "$1=$2" || die "cannot set $1=$2"
            say "raised $1 from $current to $2"
        fi
    fi
}
raise_sysctl fs.inotify.max_user_instances 8192
raise_sysctl fs.inotify.max_user_watches 524288

# --- 4. dockerd ----------------------------------------------------------------------------
docker_answers() { timeout 10 docker info >/dev/null 2>&1; }
systemd_is_init() { [[ "$(ps -p 1 -o comm= 2>/dev/null)" == systemd ]]; }

wait_for_docker() {
    local deadline=$((SECONDS + WAIT_S))
    until docker_answers; do
        if ((SECONDS >= deadline)); then
            die "dockerd did not answer \`docker info\` within ${WAIT_S}s; see $DOCKERD_LOG (or journalctl -u docker)"
        fi
        sleep 1
    done
}

if [[ $CHECK_ONLY -eq 1 ]]; then
    docker_answers && say "dockerd is running" || say "would start dockerd"
    exit 0
fi

if docker_answers && [[ $config_changed -eq 1 ]]; then
    say "daemon configuration changed: restarting dockerd"
    if systemd_is_init; then
        systemctl restart docker
    else
        pid=$(cat /var/run/docker.pid 2>/dev/null || true)
        [[ -n "$pid" ]] || die "dockerd runs but /var/run/docker.pid is missing: stop it by hand and rerun"
        kill "$pid"
        deadline=$((SECONDS + WAIT_S))
        while kill -0 "$pid" 2>/dev/null; do
            ((SECONDS < deadline)) || die "dockerd (pid $pid) did not stop within ${WAIT_S}s"
            sleep 1
        done
    fi
fi

if ! docker_answers; then
    if systemd_is_init; then
        say "starting docker.service"
        systemctl enable --now docker
    else
        say "starting dockerd (no systemd as PID 1), log: $DOCKERD_LOG"
        # dockerd starts its own containerd; setsid + nohup detach it from this shell.
        setsid nohup dockerd >>"$DOCKERD_LOG" 2>&1 </dev/null &
    fi
    wait_for_docker
fi

say "ready: $(docker info --format 'server {{.ServerVersion}}, cgroup v{{.CgroupVersion}} ({{.CgroupDriver}}), storage {{.Driver}}, default runtime {{.DefaultRuntime}}')"
