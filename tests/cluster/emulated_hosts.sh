#!/usr/bin/env bash
# An emulated cluster on one machine: H hosts, each a network namespace with its own eth0 on
# one bridge, entered with its own host name (a UTS namespace) by the launcher agent. With
# -R 2 (up to 4) every host has one NIC per rail, eth0..eth(R-1), each rail its own bridge and
# subnet, as in multi-rail GPU clusters.
#
#   emulated_hosts.sh with [-H N] [-R R] [--] CMD...   create, run CMD with CB_CLUSTER_* set,
#                                               remove (also on Ctrl-C, SIGTERM or CMD's failure)
#   emulated_hosts.sh up [-H N] [-R R]          create; prints CB_CLUSTER_* as KEY=VALUE lines
#   emulated_hosts.sh down ID                   remove one cluster (idempotent)
#   emulated_hosts.sh sweep                     remove clusters whose creating process is gone
#   emulated_hosts.sh kill ID HOST              kill every process running in HOST
#   emulated_hosts.sh throttle ID HOST RATE [NIC]  tbf on both ends of HOST's link on NIC
#                                               (eth0, eth1, ...; default every NIC; RATE: 200mbit)
#   emulated_hosts.sh check                     exit 0 if clusters can be made here, else 77
#                                               with the reason on stderr
#
# Names and subnet are unique per cluster: namespaces cb<ID>-h1..hN, bridge cb<ID>br, a free
# 10.77.K.0/24. Host names inside are h1..hN. The variables printed/exported:
#   CB_CLUSTER_ID, CB_CLUSTER_DIR, CB_CLUSTER_HOSTS (h1,h2,h3), CB_CLUSTER_ADDRS (their eth0
#   addresses), CB_CLUSTER_SUBNET, CB_CLUSTER_BRIDGE, CB_CLUSTER_RAILS (R),
#   CB_CLUSTER_RAIL_SUBNETS (one per rail, eth0's first), CB_CLUSTER_AGENT (the rsh agent),
#   CB_CLUSTER_OMPI_ARGS (Open MPI mpirun options without -H), CB_CLUSTER_HYDRA_ARGS (MPICH).
set -euo pipefail

STATE=/run/commbench-cluster
LOCK=/run/commbench-cluster.lock
MAX_HOSTS=8
MAX_RAILS=4

die() { echo "emulated_hosts: $*" >&2; exit 2; }

# Why clusters cannot be made here (empty when they can).
why_not() {
  [ "$(id -u)" -eq 0 ] || { echo "not root (network namespaces need root)"; return; }
  command -v ip >/dev/null || { echo "no 'ip' command (iproute2)"; return; }
  command -v unshare >/dev/null || { echo "no 'unshare' command (util-linux)"; return; }
  local probe="cbprobe$$"
  if ! ip netns add "$probe" 2>/dev/null; then echo "cannot create a network namespace"; return; fi
  if ! ip link add "${probe}b" type bridge 2>/dev/null; then
    ip netns del "$probe"; echo "cannot create a bridge"; return
  fi
  ip link del "${probe}b"; ip netns del "$probe"
  if ! unshare --uts true 2>/dev/null; then echo "cannot create a UTS namespace"; return; fi
}

ns_name() { echo "cb$1-$2"; }
# Rail 1 keeps the names of a one-rail cluster; rail R > 1 adds "r$R" to the veth names.
veth_root() { if [ "$3" -eq 1 ]; then echo "cb$1v$2"; else echo "cb$1v$2r$3"; fi; }
veth_host() { if [ "$3" -eq 1 ]; then echo "cb$1p$2"; else echo "cb$1p$2r$3"; fi; }
bridge_name() { if [ "$2" -eq 1 ]; then echo "cb$1br"; else echo "cb$1b$2"; fi; }

down() {
  local id=$1 dir=$STATE/$1 n ns i
  [ -n "$id" ] || die "down: missing ID"
  n=$(cat "$dir/hosts" 2>/dev/null || echo $MAX_HOSTS)
  for i in $(seq 1 "$n"); do
    ns=$(ns_name "$id" "h$i")
    if ip netns list | grep -qw "^$ns"; then
      local pids; pids=$(ip netns pids "$ns" 2>/dev/null || true)
      [ -z "$pids" ] || kill -9 $pids 2>/dev/null || true
      ip netns del "$ns" 2>/dev/null || true
    fi
    for r in $(seq 1 $MAX_RAILS); do ip link del "$(veth_root "$id" "$i" "$r")" 2>/dev/null || true; done
  done
  for r in $(seq 1 $MAX_RAILS); do ip link del "$(bridge_name "$id" "$r")" 2>/dev/null || true; done
  rm -rf "$dir"
}

sweep() {
  local d id owner
  [ -d $STATE ] || return 0
  for d in $STATE/*/; do
    [ -d "$d" ] || continue
    id=$(basename "$d"); owner=$(cat "$d/owner" 2>/dev/null || echo 0)
    if [ "$owner" = 0 ] || ! kill -0 "$owner" 2>/dev/null; then down "$id"; fi
  done
}

# A free /24 in 10.77.0.0/16 (not on any interface here).
free_subnet() {
  local k used; used=$(ip -4 -o addr show | awk '{print $4}')
  for k in $(seq 1 254); do
    grep -q "^10\.77\.$k\." <<<"$used" || { echo "10.77.$k"; return; }
  done
  die "no free subnet in 10.77.0.0/16"
}

up() {
  local n=$1 owner=$2 rails=$3 id net dir i ns br r
  [[ "$n" =~ ^[0-9]+$ ]] && [ "$n" -ge 1 ] && [ "$n" -le $MAX_HOSTS ] ||
    die "invalid host count '$n': expected 1 to $MAX_HOSTS"
  [[ "$rails" =~ ^[0-9]+$ ]] && [ "$rails" -ge 1 ] && [ "$rails" -le $MAX_RAILS ] ||
    die "invalid rail count '$rails': expected 1 to $MAX_RAILS"
  local why; why=$(why_not)
  [ -z "$why" ] || { echo "emulated_hosts: cannot create hosts: $why" >&2; exit 77; }
  mkdir -p $STATE
  exec 9>$LOCK
  flock 9
  sweep
  id=$(printf '%05x' $(( (owner * 31 + RANDOM) % 0xfffff )))
  while [ -e "$STATE/$id" ]; do id=$(printf '%05x' $(( RANDOM * 31 % 0xfffff ))); done
  dir=$STATE/$id; mkdir -p "$dir"
  echo "$owner" >"$dir/owner"; echo "$n" >"$dir/hosts"
  local nets=() subnets=""
  for r in $(seq 1 "$rails"); do
    nets[r]=$(free_subnet)
    ip link add "$(bridge_name "$id" "$r")" type bridge
    ip addr add "${nets[r]}.254/24" dev "$(bridge_name "$id" "$r")"
    ip link set "$(bridge_name "$id" "$r")" up
    subnets+="${subnets:+,}${nets[r]}.0/24"
  done
  net=${nets[1]}
  br=$(bridge_name "$id" 1)
  flock -u 9
  local hosts="" addrs=""
  for i in $(seq 1 "$n"); do
    ns=$(ns_name "$id" "h$i")
    ip netns add "$ns"
    ip link add "cb${id}v$i" type veth peer name "cb${id}p$i"
    ip link set "cb${id}v$i" master "$br" up
    ip link set "cb${id}p$i" netns "$ns"
    ip -n "$ns" link set "cb${id}p$i" name eth0
    ip -n "$ns" addr add "$net.$i/24" dev eth0
    ip -n "$ns" link set eth0 up
    ip -n "$ns" link set lo up
    ip -n "$ns" route add default via "$net.254"
    for r in $(seq 2 "$rails"); do
      ip link add "$(veth_root "$id" "$i" "$r")" type veth peer name "$(veth_host "$id" "$i" "$r")"
      ip link set "$(veth_root "$id" "$i" "$r")" master "$(bridge_name "$id" "$r")" up
      ip link set "$(veth_host "$id" "$i" "$r")" netns "$ns"
      ip -n "$ns" link set "$(veth_host "$id" "$i" "$r")" name "eth$((r - 1))"
      ip -n "$ns" addr add "${nets[r]}.$i/24" dev "eth$((r - 1))"
      ip -n "$ns" link set "eth$((r - 1))" up
    done
    hosts+="${hosts:+,}h$i"; addrs+="${addrs:+,}$net.$i"
  done
  # The agent: `AGENT [options] HOST COMMAND...` runs COMMAND in HOST's namespaces, as ssh would
  # (the command arrives as one or more words and is run by a shell).
  cat >"$dir/agent" <<AGENT
#!/bin/sh
while [ \$# -gt 0 ]; do case "\$1" in -*) shift ;; *) break ;; esac; done
host=\$1; shift
exec ip netns exec "cb$id-\$host" unshare --uts sh -c "hostname \$host; \$*"
AGENT
  chmod +x "$dir/agent"
  # Every address on the bridge subnet routes through the bridge, both for the runtime's
  # out-of-band channel and for TCP between ranks.
  local ompi="--mca plm_rsh_agent $dir/agent --mca oob_tcp_if_include $net.0/24"
  ompi+=" --mca btl_tcp_if_include $net.0/24 --mca btl self,tcp,vader --bind-to none"
  # UCX (MPICH ch4:ucx) would reach the other "hosts" through shared memory, as they share this
  # kernel's /dev/shm: TCP only, so that traffic crosses the emulated links; and over eth0 only:
  # every host's lo is 127.0.0.1 too, and a peer that connects there reaches itself (messages
  # past UCX's eager size then never arrive).
  local hydra="-launcher rsh -launcher-exec $dir/agent -iface $br -genv UCX_TLS tcp,self"
  hydra+=" -genv UCX_NET_DEVICES eth0"
  cat >"$dir/env" <<ENV
CB_CLUSTER_ID=$id
CB_CLUSTER_DIR=$dir
CB_CLUSTER_HOSTS=$hosts
CB_CLUSTER_ADDRS=$addrs
CB_CLUSTER_SUBNET=$net.0/24
CB_CLUSTER_BRIDGE=$br
CB_CLUSTER_RAILS=$rails
CB_CLUSTER_RAIL_SUBNETS=$subnets
CB_CLUSTER_AGENT=$dir/agent
CB_CLUSTER_OMPI_ARGS=$ompi
CB_CLUSTER_HYDRA_ARGS=$hydra
ENV
  cat "$dir/env"
}

host_index() {
  [[ "$1" =~ ^h([0-9]+)$ ]] || die "unknown host '$1': expected h1..h$MAX_HOSTS"
  echo "${BASH_REMATCH[1]}"
}

cmd=${1:-}; shift || true
case "$cmd" in
  check)
    why=$(why_not)
    [ -z "$why" ] || { echo "$why" >&2; exit 77; }
    ;;
  up)
    n=3; rails=1
    while [ $# -gt 0 ]; do
      case "$1" in
        -H) n=${2:-}; shift 2 ;;
        -R) rails=${2:-}; shift 2 ;;
        *) die "up: unknown argument '$1'" ;;
      esac
    done
    # Owned by the caller: `sweep` removes it once that process is gone.
    up "$n" "$PPID" "$rails"
    ;;
  with)
    n=3; rails=1
    while [ $# -gt 0 ]; do
      case "$1" in
        -H) n=${2:-}; shift 2 ;;
        -R) rails=${2:-}; shift 2 ;;
        --) shift; break ;;
        *) break ;;
      esac
    done
    [ $# -gt 0 ] || die "with: missing command"
    envfile=$(mktemp)
    up "$n" $$ "$rails" >"$envfile" || { rc=$?; rm -f "$envfile"; exit $rc; }
    id=$(sed -n 's/^CB_CLUSTER_ID=//p' "$envfile")
    trap 'down "$id"; rm -f "$envfile"' EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    while IFS='=' read -r k v; do export "$k=$v"; done <"$envfile"
    set +e
    "$@"
    exit $?
    ;;
  down) down "${1:-}" ;;
  sweep) mkdir -p $STATE; exec 9>$LOCK; flock 9; sweep ;;
  kill)
    id=${1:-}; host=${2:-}; host_index "$host" >/dev/null
    pids=$(ip netns pids "$(ns_name "$id" "$host")")
    [ -z "$pids" ] || kill -9 $pids
    ;;
  throttle)
    id=${1:-}; host=${2:-}; rate=${3:-}; nic=${4:-}; i=$(host_index "$host")
    [ -n "$rate" ] || die "throttle: missing RATE (e.g. 200mbit)"
    ns=$(ns_name "$id" "$host")
    for r in $(seq 1 $MAX_RAILS); do
      [ -z "$nic" ] || [ "$nic" = "eth$((r - 1))" ] || continue
      ip link show "$(veth_root "$id" "$i" "$r")" >/dev/null 2>&1 || continue
      tc qdisc replace dev "$(veth_root "$id" "$i" "$r")" root tbf rate "$rate" burst 64kb \
        latency 50ms
      tc -n "$ns" qdisc replace dev "eth$((r - 1))" root tbf rate "$rate" burst 64kb latency 50ms
      done_any=1
    done
    [ -n "${done_any:-}" ] || die "throttle: host $host has no NIC '$nic'"
    ;;
  *) die "usage: emulated_hosts.sh with|up|down|sweep|kill|throttle|check ... (see the header)" ;;
esac
