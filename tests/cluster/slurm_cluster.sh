#!/usr/bin/env bash
# A real one-node Slurm (slurmctld, slurmd, munge from Debian) configured and started under a
# temporary directory, for tests; everything is stopped and removed again on exit, Ctrl-C or
# SIGTERM.
#
#   slurm_cluster.sh with [--cpus N] [--emulated-hosts] [--] CMD...
#                                                  start (N CPUs per node, default max(4, nproc)),
#                                                  run CMD with SLURM_CONF set, stop
#   --emulated-hosts: inside `emulated_hosts.sh with` (CB_CLUSTER_* set), one slurmd per emulated
#   host, in its network namespace with its host name, so that `srun -N H` spans the hosts;
#   slurmctld listens on the bridge's address.
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
  pids=$(cat "$dir"/slurmd-*.pid "$dir"/slurmctld.pid "$dir"/munged.pid 2>/dev/null || true)
  pids+=" $(pgrep -f -- "$dir/" || true)"
  for f in $pids; do kill "$f" 2>/dev/null || true; done
  for f in $pids; do
    wait_for 5 sh -c "! kill -0 $f" || kill -9 "$f" 2>/dev/null || true
  done
  rm -rf "$dir"
}

# slurm.conf's node lines, and the command that starts each node's slurmd (one line per node).
nodes_here() {  # nodes_here DIR CPUS
  local host; host=$(hostname)
  echo "NodeName=$host CPUs=$2 State=UNKNOWN"
  echo "PartitionName=cb Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES"
}

nodes_emulated() {  # nodes_emulated DIR CPUS
  local i hosts addrs
  IFS=, read -ra hosts <<<"$CB_CLUSTER_HOSTS"
  IFS=, read -ra addrs <<<"$CB_CLUSTER_ADDRS"
  for i in "${!hosts[@]}"; do
    echo "NodeName=${hosts[$i]} NodeAddr=${addrs[$i]} NodeHostname=${hosts[$i]} CPUs=$2 State=UNKNOWN"
  done
  echo "PartitionName=cb Nodes=$CB_CLUSTER_HOSTS Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES"
}

# Each emulated host's slurmd in its network namespace (nsenter keeps this /sys, where the
# cgroup file system is; `ip netns exec` would mount a bare one) with its own host name.
start_slurmds_emulated() {
  local dir=$1 h
  IFS=, read -ra hosts <<<"$CB_CLUSTER_HOSTS"
  for h in "${hosts[@]}"; do
    mkdir -p "$dir/spool-$h" "$dir/tmp-$h"
    nsenter --net="/run/netns/cb$CB_CLUSTER_ID-$h" unshare --uts \
      sh -c "hostname $h; exec slurmd -N $h -f $SLURM_CONF" || return 1
  done
}

start() {
  local dir=$1 cpus=$2 emulated=$3 host nodes ctl
  host=$(hostname)
  mkdir -p "$dir/munge" "$dir/state" "$dir/spool"
  chown munge "$dir/munge"; chmod 755 "$dir/munge"
  dd if=/dev/urandom of="$dir/munge/key" bs=1024 count=1 status=none
  chown munge "$dir/munge/key"; chmod 400 "$dir/munge/key"
  runuser -u munge -- munged --num-threads=10 --key-file="$dir/munge/key" --socket="$dir/munge/socket" \
    --pid-file="$dir/munge/pid" --log-file="$dir/munge/log" --seed-file="$dir/munge/seed"
  cp "$dir/munge/pid" "$dir/munged.pid" || return 1
  if [ "$emulated" = 1 ]; then
    nodes=$(nodes_emulated "$dir" "$cpus")
    ctl="$host(${CB_CLUSTER_SUBNET%.0/24}.254)"  # the bridge's address, which every host reaches
  else
    nodes=$(nodes_here "$dir" "$cpus")
    ctl=$host
  fi
  cat >"$dir/slurm.conf" <<CONF
ClusterName=cb$$
SlurmctldHost=$ctl
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
# Per node (%n), so that slurmds of emulated hosts sharing this file system keep apart; TmpFS
# is also where PMIx puts each step's client directory.
SlurmdSpoolDir=$dir/spool-%n
TmpFS=$dir/tmp-%n
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd-%n.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd-%n.log
$nodes
CONF
  export SLURM_CONF=$dir/slurm.conf
  slurmctld -f "$SLURM_CONF" || return 1
  if [ "$emulated" = 1 ]; then
    start_slurmds_emulated "$dir" || return 1
  else
    mkdir -p "$dir/spool-$host" "$dir/tmp-$host"
    slurmd -f "$SLURM_CONF" || return 1
  fi
  local want; want=$(grep -c '^NodeName=' "$dir/slurm.conf")
  if ! wait_for 30 sh -c "[ \"\$(sinfo -h -t idle -o %D)\" = $want ]"; then
    echo "slurm_cluster: the node did not become idle; sinfo:" >&2
    sinfo >&2 || true
    tail -n 5 "$dir"/slurmctld.log "$dir"/slurmd-*.log >&2 || true
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
    cpus=$(( $(nproc) < 4 ? 4 : $(nproc) )); emulated=0
    while [ $# -gt 0 ]; do
      case "$1" in
        --cpus) cpus=${2:-}; shift 2 ;;
        --emulated-hosts) emulated=1; shift ;;
        --) shift; break ;;
        *) break ;;
      esac
    done
    if [ $emulated = 1 ] && [ -z "${CB_CLUSTER_HOSTS:-}" ]; then
      die "--emulated-hosts: run inside tests/cluster/emulated_hosts.sh with"
    fi
    [ $# -gt 0 ] || die "with: missing command"
    why=$(why_not)
    [ -z "$why" ] || { echo "slurm_cluster: cannot start Slurm: $why" >&2; exit 77; }
    dir=$(mktemp -d /tmp/cb-slurm.XXXXXX)
    chmod 755 "$dir"
    trap 'stop "$dir"' EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    start "$dir" "$cpus" "$emulated" || { echo "slurm_cluster: cannot start Slurm" >&2; exit 77; }
    export CB_SLURM_DIR=$dir
    set +e
    "$@"
    exit $?
    ;;
  *) die "usage: slurm_cluster.sh with|check ... (see the header)" ;;
esac
