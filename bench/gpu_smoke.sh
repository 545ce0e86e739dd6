#!/usr/bin/env bash
# First run of a build on a GPU machine: every NCCL code path that one rank can exercise, and with
# 2 or 7 GPUs the forced algorithms across ranks and avg at an odd rank count, in under five
# minutes, one line per check ("PASS name: detail", "FAIL name: detail", or "SKIP name: why"),
# then two figures: a 1-rank allreduce against the bare NCCL loop, and the validation kernels
# against a device-to-device copy. Exits 1 if any check failed, 77 (one line) without a GPU.
#
#   bench/gpu_smoke.sh BUILD_DIR        (e.g. bench/gpu_smoke.sh build)
set -uo pipefail
build=${1:?usage: bench/gpu_smoke.sh BUILD_DIR}
cb="$build/cmd/commbench"
[ -x "$cb" ] || { echo "FAIL setup: $cb is not an executable (build first)"; exit 1; }
gpus=$( (nvidia-smi -L 2>/dev/null || true) | grep -c '^GPU ')
if [ "$gpus" = 0 ]; then
  echo "SKIP: there is no GPU here (nvidia-smi lists none); nothing to check"
  exit 77
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0

pass() { echo "PASS $1: $2"; }
fail() { echo "FAIL $1: $2"; failed=1; }

# check NAME EXPECTED_EXIT ENV commbench-arguments...  (ENV: VAR=VALUE, or - for none); CSV
# rows must all have wrong == 0.
check() {
  local name=$1 want=$2 envs=$3
  shift 3
  [ "$envs" = - ] && envs=
  local start=$SECONDS
  env $envs "$cb" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
  local rc=$?
  local took=$((SECONDS - start))
  if [ "$rc" != "$want" ]; then
    fail "$name" "exit $rc, wanted $want ($took s): $(head -c 300 "$tmp/$name.err" | tr '\n' ' ')"
    return
  fi
  if [ "$want" = 0 ] && grep -q '^backend,' "$tmp/$name.out"; then
    local bad rows
    rows=$(python3 - "$tmp/$name.out" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
bad = [r for r in rows if r["collective"] != "barrier" and r["wrong"] != "0"]
print(len(rows), len(bad))
PY
)
    read -r rows bad <<<"$rows"
    if [ "$bad" != 0 ] || [ "$rows" = 0 ]; then
      fail "$name" "$bad of $rows cases wrong"
      return
    fi
    pass "$name" "$rows cases validated ($took s)"
    return
  fi
  pass "$name" "exit $rc as expected ($took s)"
}

if ! "$cb" list backends | grep -E '^nccl' | grep -vq unavailable; then
  echo "SKIP: $gpus GPUs, but the nccl backend cannot run: $("$cb" list backends | grep -E '^nccl')"
  exit 77
fi

"$cb" version >"$tmp/version" 2>&1
if grep -q "compute capability" "$tmp/version" && grep -q "^NCCL: 2\." "$tmp/version"; then
  pass version "$(grep -E '^(NCCL|CUDA):' "$tmp/version" | tr '\n' ' ')"
else
  fail version "$(tr '\n' ' ' <"$tmp/version")"
fi

csv=(--format csv --min-time 0.005)
check sweep 0 - run -B nccl -N 1 -c all -d all -o all --placement both -b 8 -e 1M -f 32 "${csv[@]}"
check gpus_per_process 0 - run -B nccl -N 1 -g 1 -c allreduce,allgather,alltoall -e 1M "${csv[@]}"
check avg_fp8_bf16 0 - run -B nccl -N 1 -c allreduce,reduce_scatter,reduce -o avg,sum \
  -d float,half,bfloat16,fp8_e4m3,fp8_e5m2,double -e 4M "${csv[@]}"
check in_place_stage_no_warmup 0 - run -B nccl -N 1 -c alltoall,sendrecv --placement in -w 0 \
  -n 20 -b 1K -e 64M -f 64 "${csv[@]}"
check non_blocking 0 COMMBENCH_NCCL_BLOCKING=0 run -B nccl -N 1 -c allreduce,broadcast -e 1M \
  "${csv[@]}"
check blocking_value_checked 2 COMMBENCH_NCCL_BLOCKING=maybe run -B nccl -N 1 -c allreduce
check corrupt_caught 3 COMMBENCH_TEST_FAULT=corrupt:0 run -B nccl -N 1 -c allreduce -e 1M \
  "${csv[@]}"
check hang_aborted 4 COMMBENCH_TEST_FAULT=hang:0 run -B nccl -N 1 -c allreduce -e 1M \
  --timeout 5
check forced_algorithms 0 - run -B nccl -N 1 -A all -c allreduce -e 1M "${csv[@]}"
check alltoallv_splits 0 - run -B nccl -N 1 -c alltoallv --split uniform --split zipf:1 \
  --split moe:2,1,0,1 --moe-hidden 1024 -b 64K -e 16M -f 16 "${csv[@]}"
check alltoallv_corrupt_caught 3 COMMBENCH_TEST_FAULT=corrupt:0 run -B nccl -N 1 -c alltoallv \
  --split zipf:1 -e 1M "${csv[@]}"
check cuda_graph 0 - run -B nccl -N 1 --cuda-graph 20 -c allreduce,allgather,broadcast -e 1M \
  "${csv[@]}"
# needs NAME COUNT: whether this machine has COUNT GPUs; says SKIP for NAME when not.
needs() {
  [ "$gpus" -ge "$2" ] && return 0
  echo "SKIP $1: needs $2 GPUs, $gpus here"
  return 1
}
if needs forced_algorithms_2gpus 2; then
  # NCCL refuses some combinations at set-up (ncclInvalidUsage): they are skipped, and the next
  # combination must open.
  check forced_algorithms_2gpus 0 - run -B nccl -N 2 -A all -c allreduce,allgather,reduce_scatter \
    -e 1M "${csv[@]}"
  check cuda_graph_2gpus 0 - run -B nccl -N 2 --cuda-graph 20 -c allreduce -e 1M "${csv[@]}"
  # Uneven blocks between GPUs, one process each and two in one process, and a bad block from
  # another rank.
  check alltoallv_splits_2gpus 0 - run -B nccl -N 2 -c alltoallv --split distance:0.5 \
    --split zipf:1.5 --split moe:4,2,1,1.25 --moe-hidden 2048 -b 64K -e 64M -f 32 "${csv[@]}"
  check alltoallv_one_process_2gpus 0 - run -B nccl -N 1 -g 2 -c alltoallv --split zipf:1.5 \
    -e 16M "${csv[@]}"
  check alltoallv_corrupt_2gpus 3 COMMBENCH_TEST_FAULT=corrupt:1:0 run -B nccl -N 2 \
    -c alltoallv --split zipf:1.5 -e 1M "${csv[@]}"
fi
if needs avg_7_ranks 7; then
  check avg_7_ranks 0 - run -B nccl -N 7 -c allreduce,reduce_scatter,reduce -o avg \
    -d float,half,bfloat16,int32,uint8 -e 1M "${csv[@]}"
fi
check probe_copy 0 - probe copy --size 64M --repeats 3
if [ -x "$build/test_nccl_gpu" ] || [ -x "$build/tests/unit/test_nccl_gpu" ]; then
  start=$SECONDS
  if ctest --test-dir "$build" -L gpu --timeout 240 >"$tmp/ctest" 2>&1 &&
    ! grep -q 'tests passed' "$tmp/ctest"; then
    echo "SKIP ctest_gpu: $build holds no ctest tests (a copied build: run the gpu tests directly)"
  elif grep -q '100% tests passed' "$tmp/ctest"; then
    pass ctest_gpu "$(grep -E 'tests passed|tests failed' "$tmp/ctest") ($((SECONDS - start)) s)"
  else
    fail ctest_gpu "$(grep -E 'tests failed|Failed|\*\*\*' "$tmp/ctest" | tr '\n' ' ' | head -c 400)"
  fi
fi

# Figures. At one rank allreduce's busbw is 0 by definition (2(n-1)/n), so time and algbw are
# compared; both sides time a back-to-back loop of 64 MiB float sums with CUDA events.
"$cb" run -B nccl -N 1 -c allreduce -b 64M -e 64M -w 10 -n 50 --format csv >"$tmp/cb.csv" \
  2>"$tmp/cb.err"
bare="$build/bench/nccl_bare_loop"
if [ -x "$bare" ]; then
  mpirun.openmpi -np 1 "$bare" -c allreduce -b 64M -e 64M -n 50 -w 10 >"$tmp/bare.csv" \
    2>"$tmp/bare.err" || mpirun -np 1 "$bare" -c allreduce -b 64M -e 64M -n 50 -w 10 \
    >"$tmp/bare.csv" 2>"$tmp/bare.err"
fi
python3 - "$tmp/cb.csv" "$tmp/bare.csv" <<'PY'
import csv, sys
def rows(path):
    try:
        return list(csv.DictReader(open(path)))
    except OSError:
        return []
c, b = rows(sys.argv[1]), rows(sys.argv[2])
if not c:
    print("FIGURE allreduce_1rank: commbench gave no row")
else:
    c = c[0]
    line = (f"FIGURE allreduce_1rank 64MiB: commbench {float(c['time_us']):.1f} us, "
            f"algbw {float(c['algbw_GBps']):.1f} GB/s, busbw {float(c['busbw_GBps']):.1f} GB/s")
    if b:
        b = b[0]
        line += (f"; nccl_bare_loop {float(b['time_us']):.1f} us, algbw "
                 f"{float(b['algbw_GBps']):.1f} GB/s, busbw {float(b['busbw_GBps']):.1f} GB/s; "
                 f"time ratio {float(c['time_us']) / float(b['time_us']):.3f}")
    else:
        line += "; nccl_bare_loop not built or failed"
    print(line)
PY
vb="$build/bench/validation_bandwidth"
if [ -x "$vb" ]; then
  "$vb" 1 >"$tmp/vb.csv" 2>&1
  echo "FIGURE validation_kernels: $(grep -E '^(float|half|double),' "$tmp/vb.csv" | \
    awk -F, '{printf "%s check %s GB/s (%s%% of copy); ", $1, $4, $5}')$(grep '^#' "$tmp/vb.csv" | sed 's/^# //')"
else
  echo "FIGURE validation_kernels: $vb not built"
fi
[ "$failed" = 0 ] && echo "ALL CHECKS PASSED" || echo "SOME CHECKS FAILED"
exit "$failed"
