#!/usr/bin/env bash
# `locus run`, the launcher, on loopback: tests/locus_run.sh LOCUS LOCUS_TESTS CASE. The ranks are
# `sh -c` programs, and in case process_group the LaunchedByLocusRun tests of LOCUS_TESTS
# (tests/tools/launched_ranks_test.cpp) in a real process group; case mpi launches through mpirun.
# Every case is bounded: a launcher that fails to stop its ranks fails the case within seconds.
# Exit 77: skipped (no Gloo; for case mpi, no MPI).
set -euo pipefail
locus="$1"
locus_tests="$2"
case_name="$3"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

fail() { echo "FAIL: $*"; echo "--- stdout"; cat out 2>/dev/null || true; echo "--- stderr"; cat err 2>/dev/null || true; exit 1; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }
# A port the kernel just handed out and took back: free, and unlikely to be taken again soon.
free_port() { perl -MIO::Socket::INET -e 'print IO::Socket::INET->new(Listen => 1, LocalAddr => "127.0.0.1")->sockport'; }
# Runs `locus run ARGS...` with stdout in ./out, stderr in ./err, its status in $rc, its time in $ms.
launch() {
  local t0
  t0=$(now_ms)
  rc=0
  timeout 20 "$locus" run "$@" > out 2> err || rc=$?
  ms=$(($(now_ms) - t0))
}
expect_rc() { [ "$rc" = "$1" ] || fail "exit status $rc, expected $1"; }
expect_line() { grep -qxF -- "$2" "$1" || fail "no line '$2' in $1"; }
expect_text() { grep -qF -- "$2" "$1" || fail "no '$2' in $1"; }
# Signals are delivered asynchronously and an orphan's zombie waits for init: allow two seconds.
expect_dead() {
  [ $# -gt 0 ] || fail "no process ids in the output"
  for pid in "$@"; do
    for _ in $(seq 40); do
      case "$(sed 's/.*) //' "/proc/$pid/stat" 2> /dev/null | cut -c1)" in "" | Z) continue 2 ;; esac
      sleep 0.05
    done
    fail "process $pid is still alive: $(cat "/proc/$pid/cmdline" | tr '\0' ' ')"
  done
}

case "$case_name" in
success)
  unset OMP_NUM_THREADS
  port=$(free_port)
  launch --nproc-per-node 2 --master-port "$port" sh -c '
    echo "env $RANK $LOCAL_RANK $WORLD_SIZE $LOCAL_WORLD_SIZE $GROUP_RANK $MASTER_ADDR $MASTER_PORT"
    echo "store $LOCUS_STORE"; echo "id $LOCUS_RUN_ID"; echo "omp $OMP_NUM_THREADS"
    echo "to stderr" >&2
    dir=${LOCUS_STORE#file://}; [ -d "$dir" ] && [ "$(stat -c %a "$dir")" = 700 ] && echo "private store"
    printf "no newline at the end"' > /dev/null
  expect_rc 0
  for r in 0 1; do
    expect_line out "[rank$r]: env $r $r 2 2 0 127.0.0.1 $port"
    expect_line out "[rank$r]: private store"
    expect_line out "[rank$r]: no newline at the end"
    expect_line err "[rank$r]: to stderr"
  done
  [ "$(grep -c '^\[rank.\]: store file:///' out)" = 2 ] || fail "LOCUS_STORE is not file://"
  [ "$(grep '\]: store ' out | sort -u -k3 | wc -l)" = 1 ] || fail "the ranks got different stores"
  [ "$(grep '\]: id ' out | sort -u -k3 | wc -l)" = 1 ] || fail "the ranks got different run ids"
  store=$(grep -m1 '\]: store ' out | sed 's|.*file://||')
  [ ! -e "$store" ] || fail "the store directory $store outlived the launch"
  # OMP_NUM_THREADS unset: the cores shared out among the local ranks, said on the first line.
  cores=$(env -u OMP_THREAD_LIMIT nproc); per_rank=$(( cores / 2 )); [ "$per_rank" -ge 1 ] || per_rank=1
  for r in 0 1; do expect_line out "[rank$r]: omp $per_rank"; done
  [ "$(head -1 err)" = "locus run: OMP_NUM_THREADS=$per_rank for each rank ($cores cores / 2 local ranks); set OMP_NUM_THREADS to choose another number" ] ||
    fail "the first line of stderr does not give the ranks' OMP_NUM_THREADS"
  [ "$(tail -n +2 err | grep -vc '^\[rank.\]: ')" = 0 ] || fail "unprefixed lines on stderr"
  # A user's OMP_NUM_THREADS is left alone, silently.
  OMP_NUM_THREADS=3 launch --nproc-per-node 2 --master-port "$port" sh -c 'echo "omp $OMP_NUM_THREADS"'
  expect_rc 0
  for r in 0 1; do expect_line out "[rank$r]: omp 3"; done
  grep -q OMP_NUM_THREADS err && fail "locus run spoke of OMP_NUM_THREADS although the user set it"
  # The defaults, torchrun's.
  "$locus" run --help | grep -q 'master-port.*=29500' || fail "--master-port does not default to 29500"
  launch --run-id my-run-1 sh -c 'echo "$WORLD_SIZE $MASTER_ADDR $LOCUS_RUN_ID"'
  expect_line out "[rank0]: 1 127.0.0.1 my-run-1"
  # What follows the program is the program's, options and "--" included.
  launch --nproc-per-node 1 --master-port "$port" -- sh -c 'echo "$@"' sh --nproc-per-node 3 -- x
  expect_rc 0
  expect_line out "[rank0]: --nproc-per-node 3 -- x"
  ;;
multi_node)
  # Two nodes of two ranks on one machine: node 1 first, as it may start before the master.
  port=$(free_port)
  common=(--nnodes 2 --nproc-per-node 2 --master-port "$port" --run-id job-7 --store "file://$work")
  prog='echo "$RANK $LOCAL_RANK $WORLD_SIZE $GROUP_RANK $LOCUS_STORE $LOCUS_RUN_ID"'
  timeout 20 "$locus" run "${common[@]}" --node-rank 1 sh -c "$prog" > out1
  timeout 20 "$locus" run "${common[@]}" --node-rank 0 sh -c "$prog" > out0
  cat out0 out1 > out
  for r in 0 1 2 3; do expect_line out "[rank$r]: $r $((r % 2)) 4 $((r / 2)) file://$work job-7"; done
  # Without --store, several nodes meet in a Redis at the master port.
  launch --nnodes 2 --node-rank 1 --master-addr 10.0.0.1 --master-port 6379 --run-id job-8 sh -c 'echo "$LOCUS_STORE"'
  expect_rc 0
  expect_line out "[rank1]: redis://10.0.0.1:6379"
  ;;
redis_two_nodes)
  # Two launchers as two nodes of one rank each, meeting in a Redis server this test starts on
  # loopback (the default store of a multi-node launch: redis://MASTER_ADDR:MASTER_PORT), and a
  # real all-reduce between their ranks.
  command -v redis-server > /dev/null || { echo "no redis-server"; exit 77; }
  port=$(free_port)
  redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no > redis.log 2>&1 &
  redis=$!
  trap 'kill "$redis" 2> /dev/null; rm -rf "$work"' EXIT
  for _ in $(seq 100); do (exec 3<> "/dev/tcp/127.0.0.1/$port") 2> /dev/null && break; sleep 0.05; done
  export LOCUS_LAUNCHED_TEST=1 LOCUS_GLOO_HOSTNAME=127.0.0.1
  common=(--nnodes 2 --nproc-per-node 1 --master-addr 127.0.0.1 --master-port "$port" --run-id redis-job-1)
  test_args=("$locus_tests" --gtest_filter=LaunchedByLocusRun.AllReduceOverTheLaunchersStore)
  rc1=0
  timeout 30 "$locus" run "${common[@]}" --node-rank 1 "${test_args[@]}" > out1 2>&1 &
  node1=$!
  rc=0
  timeout 30 "$locus" run "${common[@]}" --node-rank 0 "${test_args[@]}" > out 2> err || rc=$?
  wait "$node1" || rc1=$?
  if grep -q "SKIPPED.*built without Gloo" out; then exit 77; fi
  cat out1 >> out
  expect_rc 0
  [ "$rc1" = 0 ] || fail "node 1 exited with $rc1"
  for r in 0 1; do expect_line out "[rank$r]: [  PASSED  ] 1 test."; done
  expect_text out "[rank1]: Note: Google Test filter"
  ;;
fail_fast)
  # Rank 1 fails after 0.5 s; ranks 0 and 2 would sleep a minute.
  launch --nproc-per-node 3 sh -c '
    if [ "$RANK" = 1 ]; then sleep 0.5; echo "step 7" >&2; echo "error: the loss is nan" >&2; exit 3; fi
    echo "pid $$"; exec sleep 60'
  expect_rc 3
  [ "$ms" -lt 10000 ] || fail "the launcher took $ms ms to stop the ranks"
  expect_text err "locus run: rank 1 exited with code 3; stopping the other ranks"
  expect_text err "locus run: rank 1 ("
  # The summary, last on stderr, repeats the failed rank's last lines.
  tail -3 err | grep -q "last lines of rank 1's stderr" || fail "no summary at the end of stderr"
  tail -2 err | grep -qxF "    step 7" || fail "the summary lacks the failed rank's lines"
  tail -1 err | grep -qxF "    error: the loss is nan" || fail "the summary lacks the failed rank's last line"
  expect_dead $(sed -n 's/^\[rank[02]\]: pid //p' out)
  # A program that reports on stdout only (GoogleTest does): the summary shows stdout instead.
  launch --nproc-per-node 2 sh -c '[ "$RANK" = 1 ] || exec sleep 60; echo "[  FAILED  ] Suite.Case"; exit 1'
  expect_rc 1
  expect_text err "rank 1 wrote nothing to stderr; last lines of its stdout:"
  tail -1 err | grep -qxF "    [  FAILED  ] Suite.Case" || fail "the summary lacks the rank's stdout"
  ;;
process_group)
  # init_process_group from the launcher's environment alone, then the failure `locus run` is for:
  # rank 1 throws (uncaught, as in a program of one's own) while rank 0 waits for it to join, with
  # a timeout of 30 minutes.
  export LOCUS_LAUNCHED_TEST=1
  launch --nproc-per-node 3 "$locus_tests" --gtest_filter=LaunchedByLocusRun.AllReduceOverTheLaunchersStore
  if grep -q "SKIPPED.*built without Gloo" out; then exit 77; fi
  expect_rc 0
  for r in 0 1 2; do expect_line out "[rank$r]: [  PASSED  ] 1 test."; done
  launch --nproc-per-node 2 "$locus_tests" --gtest_catch_exceptions=0 \
    --gtest_filter=LaunchedByLocusRun.RankOneThrowsWhileTheOthersWaitForIt
  expect_rc $((128 + 6))
  [ "$ms" -lt 10000 ] || fail "the launcher took $ms ms to stop the ranks"
  expect_text err "rank 1 killed by SIGABRT; stopping the other ranks"
  tail -3 err | grep -qF "what():  rank 1 gives up before joining" || fail "the summary lacks the exception"
  ;;
locus_error)
  # A Locus program that throws in rank 1 (an unusable LOCUS_DEVICE; a bad --device is now a
  # usage error, exit status 2, before Locus runs) while rank 0 waits.
  launch --nproc-per-node 2 sh -c 'if [ "$RANK" = 1 ]; then LOCUS_DEVICE=nowhere exec "$0" train --epochs 1; fi; exec sleep 60' "$locus"
  expect_rc 1
  [ "$ms" -lt 10000 ] || fail "the launcher took $ms ms to stop the ranks"
  expect_text err "[rank1]: locus: LOCUS_DEVICE='nowhere' cannot be used: invalid device string 'nowhere'"
  tail -1 err | grep -q "^    locus: LOCUS_DEVICE='nowhere' cannot be used" || fail "the summary lacks the error"
  ;;
grace_period)
  # Rank 0 ignores SIGTERM, so SIGKILL must follow after --grace-period; rank 1 dies of SIGSEGV.
  launch --nproc-per-node 2 --grace-period 1 sh -c '
    trap "" TERM
    if [ "$RANK" = 1 ]; then sleep 0.3; kill -SEGV $$; fi
    echo "pid $$"; sleep 60 & echo "child $!"; wait'
  expect_rc $((128 + 11))
  [ "$ms" -lt 10000 ] || fail "the launcher took $ms ms to stop the ranks"
  expect_text err "rank 1 killed by SIGSEGV"
  expect_text err "rank(s) 0 still running 1 s after being asked to stop: sending SIGKILL"
  expect_text err "rank 1 wrote nothing"
  # The rank's own child died with it: the whole process group was killed.
  expect_dead $(sed -n 's/^\[rank0\]: \(pid\|child\) //p' out)
  ;;
signals)
  # SIGTERM to the launcher reaches every rank and every process they started.
  "$locus" run --nproc-per-node 2 sh -c 'sleep 60 & echo "pids $$ $!"; wait' > out 2> err &
  launcher=$!
  for _ in $(seq 100); do [ "$(grep -c pids out)" = 2 ] && break; sleep 0.05; done
  [ "$(grep -c pids out)" = 2 ] || fail "the ranks did not start"
  t0=$(now_ms)
  kill -TERM "$launcher"
  rc=0
  wait "$launcher" || rc=$?
  ms=$(($(now_ms) - t0))
  expect_rc $((128 + 15))
  [ "$ms" -lt 5000 ] || fail "the launcher took $ms ms to stop after SIGTERM"
  expect_text err "locus run: got SIGTERM; passing it to every rank"
  expect_dead $(sed -n 's/^\[rank.\]: pids //p' out)
  ;;
busy_port)
  perl -MIO::Socket::INET -e '$s = IO::Socket::INET->new(Listen => 1, LocalAddr => "127.0.0.1") or die;
                              $| = 1; print $s->sockport, "\n"; sleep 30' > port &
  listener=$!
  for _ in $(seq 100); do [ -s port ] && break; sleep 0.05; done
  port=$(cat port)
  launch --nproc-per-node 2 --master-port "$port" sh -c 'touch started'
  kill "$listener"
  expect_rc 1
  expect_line err "locus run: --master-port $port is not free on this machine (Address already in use): another job or server is using it; choose a free port with --master-port"
  [ ! -e started ] || fail "a rank was started"
  ;;
usage)
  launch --nproc-per-node 2
  expect_rc 2
  expect_text err "locus run: no program to run"
  launch --nproc-per-node 0 true
  expect_rc 2
  expect_text err "--nproc-per-node"
  launch --no-such-option true
  expect_rc 2
  expect_text err "locus run: unknown option --no-such-option"
  launch --nnodes 2 --node-rank 2 --run-id x true
  expect_rc 2
  expect_text err "locus run: --node-rank 2 must be below --nnodes 2"
  launch --nnodes 2 true
  expect_rc 2
  expect_text err "locus run: --nnodes 2 needs --run-id"
  launch --nproc-per-node 2 no-such-program-here
  expect_rc 127
  expect_line err "locus run: 'no-such-program-here': not found in PATH"
  echo "echo hello" > not-executable
  launch ./not-executable
  expect_rc 126
  expect_line err "locus run: cannot run './not-executable': Permission denied"
  ;;
mpi)
  # --backend mpi: mpirun starts the ranks, with the environment of any `locus run` and
  # LOCUS_DIST_BACKEND=mpi; a rank that fails ends the job (mpirun's default), whether it exits
  # with an error, throws, or times out in a collective (tests/distributed/mpi_test.cpp, MpiFailure).
  command -v mpirun > /dev/null || { echo "no mpirun"; exit 77; }
  "$locus" info | grep -qxF "  mpi: available" || { echo "built without MPI"; exit 77; }
  unset OMP_NUM_THREADS
  port=$(free_port)
  launch --backend mpi --nproc-per-node 2 --master-port "$port" sh -c '
    echo "env $RANK $LOCAL_RANK $WORLD_SIZE $LOCAL_WORLD_SIZE $GROUP_RANK $MASTER_ADDR $MASTER_PORT $LOCUS_DIST_BACKEND"
    echo "store $LOCUS_STORE"; echo "id $LOCUS_RUN_ID"; echo "to stderr" >&2'
  expect_rc 0
  for r in 0 1; do
    expect_line out "[1,$r]<stdout>:env $r $r 2 2 0 127.0.0.1 $port mpi"
    expect_line err "[1,$r]<stderr>:to stderr"
  done
  [ "$(grep -c '<stdout>:store file:///' out)" = 2 ] || fail "LOCUS_STORE is not file://"
  [ "$(grep '<stdout>:store ' out | sort -u -t: -k2 | wc -l)" = 1 ] || fail "the ranks got different stores"
  [ "$(grep '<stdout>:id ' out | sort -u -t: -k2 | wc -l)" = 1 ] || fail "the ranks got different run ids"
  store=$(grep -m1 '<stdout>:store ' out | sed 's|.*file://||')
  [ ! -e "$store" ] || fail "the store directory $store outlived the launch"
  # An inherited LOCUS_DIST_BACKEND is the launcher's to set: gone under the default launch.
  LOCUS_DIST_BACKEND=mpi launch sh -c 'echo "backend [${LOCUS_DIST_BACKEND-unset}]"'
  expect_line out "[rank0]: backend [unset]"
  # A rank that exits with an error ends the others' wait (the job, as mpirun ends it): each case
  # ends with the failed rank's status, where waiting would have ended in `timeout`'s 124.
  launch --backend mpi --grace-period 1 --nproc-per-node 3 sh -c 'if [ "$RANK" = 1 ]; then exit 3; fi; exec sleep 60'
  expect_rc 3
  export LOCUS_MPI_FAILURE_TEST
  for failure in exit:3 throw:134 timeout:1; do  # exit(3), SIGABRT, MPI_Abort(comm, 1)
    LOCUS_MPI_FAILURE_TEST=${failure%:*}
    launch --backend mpi --grace-period 1 --nproc-per-node 2 "$locus_tests" --gtest_catch_exceptions=0 \
      --gtest_filter=MpiFailure.*
    [ "$rc" = "${failure#*:}" ] || fail "$LOCUS_MPI_FAILURE_TEST: exit status $rc, expected ${failure#*:}"
    grep -q "the all-reduce returned" out && fail "$LOCUS_MPI_FAILURE_TEST: an all-reduce returned without every rank"
  done
  unset LOCUS_MPI_FAILURE_TEST
  expect_text err "[1,0]<stderr>:[locus] DistributedError: all_reduce(float32 [4], sum) #0 failed on rank 0 of process group 'timeout' after waiting up to 2000 ms: a rank did not arrive (MPI cannot say which), and MPI cannot cancel a collective, so Locus ends the job (MPI_Abort)"
  # Usage: one node only; mpirun must be there.
  launch --backend mpi --nnodes 2 --run-id x true
  expect_rc 2
  expect_text err "locus run: --backend mpi starts the ranks of this node through mpirun; for several nodes run mpirun yourself"
  launch --backend nccl true
  expect_rc 2
  expect_text err "--backend"
  rc=0
  PATH=/nonexistent "$locus" run --backend mpi true > out 2> err || rc=$?
  expect_rc 127
  expect_line err "locus run: 'mpirun': not found in PATH: --backend mpi runs Open MPI's mpirun (Debian: apt install openmpi-bin)"
  ;;
*)
  echo "unknown case $case_name"
  exit 2
  ;;
esac
echo "ok: locus run, $case_name"
