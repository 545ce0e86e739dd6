#!/usr/bin/env bash
# A real one-node Slurm (slurmctld, slurmd, munge from Debian) configured and started under a
# temporary directory, for tests; everything is stopped and removed again on exit, Ctrl-C or
# SIGTERM.
#
#   slurm_cluster.sh with [--cpus N] [--] CMD...   start (N CPUs, default max(4, nproc)), run CMD
#                                                  with SLURM_CONF set, stop
#   slurm_cluster.sh check                         exit 0 if it can start here, else 77 with the
#                                                  reason on stderr
#
# Ports, the munge socket and every state, spool, log and pid file are private to the run, so
# it neither needs nor touches a system-wide Slurm or munge. CMD sees SLURM_CONF and
# CB_SLURM_DIR (logs for a failing test to show).
set -euo pipefail

die() { echo "slurm_cluster: $*" >&2; exit 2; }

why_not() {
  [ "$(id -u)" -eq 0 ] || { echo "not root (slurmd runs jobs as root here)"; return; }
  local p
  for p in slurmctld slurmd srun munged runuser; do
    command -v $p >/dev/null || { echo "no '$p' (Debian: slurmctld slurmd slurm-client munge)"; return; }
  done
  id munge >/dev/null 2>&1 || { echo "no 'munge' user"; return; }
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

wait_for() {  # wait_for SECONDS CMD...: until CMD succeeds
  local end=$((SECONDS + $1)); shift
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -lt $end ] || return 1
    sleep 0.2
  done
}

stop() {
  local dir=$1 f pids
  # The daemons this run started: by pid file, and by their private configuration's path
  # (a daemon that failed early may not have written its pid file).
  pids=$(cat "$dir"/slurmd.pid "$dir"/slurmctld.pid "$dir"/munged.pid 2>/dev/null || true)
  pids+=" $(pgrep -f -- "$dir/" || true)"
  for f in $pids; do kill "$f" 2>/dev/null || true; done
  for f in $pids; do
    wait_for 5 sh -c "! kill -0 $f" || kill -9 "$f" 2>/dev/null || true
  done
  rm -rf "$dir"
}

start() {
  local dir=$1 cpus=$2 host
  host=$(hostname)
  mkdir -p "$dir/munge" "$dir/state" "$dir/spool"
  chown munge "$dir/munge"; chmod 755 "$dir/munge"
  dd if=/dev/urandom of="$dir/munge/key" bs=1024 count=1 status=none
  chown munge "$dir/munge/key"; chmod 400 "$dir/munge/key"
  runuser -u munge -- munged --num-threads=10 --key-file="$dir/munge/key" --socket="$dir/munge/socket" \
    --pid-file="$dir/munge/pid" --log-file="$dir/munge/log" --seed-file="$dir/munge/seed"
  cp "$dir/munge/pid" "$dir/munged.pid" || return 1
  cat >"$dir/slurm.conf" <<CONF
ClusterName=cb$$
SlurmctldHost=$host
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/socket
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=pmix
ReturnToService=2
# The node may declare more CPUs than it has, so 3-rank jobs run on a 2-core machine.
SlurmdParameters=config_overrides
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
NodeName=$host CPUs=$cpus State=UNKNOWN
PartitionName=cb Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF
  export SLURM_CONF=$dir/slurm.conf
  slurmctld -f "$SLURM_CONF" || return 1
  slurmd -f "$SLURM_CONF" || return 1
  if ! wait_for 30 sh -c "sinfo -h -o %T | grep -qx idle"; then
    echo "slurm_cluster: the node did not become idle; sinfo:" >&2
    sinfo >&2 || true
    tail -n 5 "$dir/slurmctld.log" "$dir/slurmd.log" >&2 || true
    return 1
  fi
}

cmd=${1:-}; shift || true
case "$cmd" in
  check)
    why=$(why_not)
    [ -z "$why" ] || { echo "$why" >&2; exit 77; }
    ;;
  with)
    cpus=$(( $(nproc) < 4 ? 4 : $(nproc) ))
    while [ $# -gt 0 ]; do
      case "$1" in --cpus) cpus=${2:-}; shift 2 ;; --) shift; break ;; *) break ;; esac
    done
    [ $# -gt 0 ] || die "with: missing command"
    why=$(why_not)
    [ -z "$why" ] || { echo "slurm_cluster: cannot start Slurm: $why" >&2; exit 77; }
    dir=$(mktemp -d /tmp/cb-slurm.XXXXXX)
    chmod 755 "$dir"
    trap 'stop "$dir"' EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    start "$dir" "$cpus" || { echo "slurm_cluster: cannot start Slurm" >&2; exit 77; }
    export CB_SLURM_DIR=$dir
    set +e
    "$@"
    exit $?
    ;;
  *) die "usage: slurm_cluster.sh with|check ... (see the header)" ;;
esac
