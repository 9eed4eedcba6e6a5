#!/usr/bin/env bash
# A one-node Slurm cluster on this machine, for trying onelearn-run's batch scripts and for the
# Slurm test (ctest with -DONELEARN_SLURM_TESTS=ON). Debian 12's slurm-wlm (22.05) and munge:
#
#   apt-get install -y slurm-wlm munge          (not in install-deps.sh: only this script needs it)
#   scripts/slurm-local.sh start [DIR]          starts munged, slurmctld and slurmd; prints the
#                                               SLURM_CONF line to export
#   export SLURM_CONF=DIR/slurm.conf
#   onelearn-run slurm --np 2 -- ./train | sbatch
#   scripts/slurm-local.sh stop [DIR]           stops the three daemons (and any job left)
#
# DIR (default: $ONELEARN_SLURM_DIR, else /tmp/onelearn-slurm) holds everything: the munge key
# and socket, slurm.conf, the controller's state, slurmd's spool, the daemons' logs and pid files.
# Nothing under /etc or /run is touched, and the daemons run as the caller (Slurm's SlurmUser is
# the caller too: root in a container). What a container allows, as measured on Debian 12:
# proctrack/linuxproc (no cgroups), task/none (no CPU binding), no accounting; `srun --mpi=pmix`
# starts Debian's Open MPI ranks. Ports: $ONELEARN_SLURM_PORT (controller, default 16817) and the
# next one (slurmd).
set -euo pipefail

command=${1:-}
dir=${2:-${ONELEARN_SLURM_DIR:-/tmp/onelearn-slurm}}
port=${ONELEARN_SLURM_PORT:-16817}

usage() {
  echo "usage: $0 start|stop [DIR]" >&2
  exit 2
}

# Sends SIGTERM to the daemon whose pid file is $1, waits up to 10 s, then SIGKILL.
stop_daemon() {
  local pidfile=$1 pid
  [[ -f $pidfile ]] || return 0
  pid=$(<"$pidfile")
  if [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 100); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$pidfile"
}

stop() {
  [[ -d $dir ]] && dir=$(cd "$dir" && pwd)
  if [[ -f $dir/slurm.conf && -f $dir/slurmctld.pid ]]; then
    # Jobs still running end with the cluster: their steps would outlive slurmd otherwise.
    export SLURM_CONF=$dir/slurm.conf
    timeout 10 scancel --quiet --user="$(id -un)" 2>/dev/null || true
    for _ in $(seq 50); do
      [[ -z $(timeout 5 squeue --noheader --states=all --format=%T 2>/dev/null | grep -v -e COMPLETED -e CANCELLED -e FAILED -e TIMEOUT -e NODE_FAIL -e PREEMPTED -e OUT_OF_MEMORY) ]] && break
      sleep 0.2
    done
  fi
  stop_daemon "$dir/slurmd.pid"
  stop_daemon "$dir/slurmctld.pid"
  stop_daemon "$dir/munge/munged.pid"
  # A job step's slurmstepd that outlived slurmd (and, with it, the step's processes): ours are
  # those whose environment names this cluster's slurm.conf (slurmd gives it to them).
  local pid
  for pid in $(pgrep -x slurmstepd || true); do
    if tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qx "SLURM_CONF=$dir/slurm.conf"; then
      kill -9 "$pid" 2>/dev/null || true
    fi
  done
  echo "slurm-local: stopped (the files stay in $dir)"
}

start() {
  for program in munged mungekey slurmctld slurmd sinfo; do
    command -v "$program" >/dev/null ||
      { echo "slurm-local: $program not found; apt-get install -y slurm-wlm munge" >&2; exit 1; }
  done
  if [[ -f $dir/slurmctld.pid ]] && kill -0 "$(<"$dir/slurmctld.pid")" 2>/dev/null; then
    echo "slurm-local: already running in $dir; stop it first" >&2
    exit 1
  fi
  mkdir -p "$dir"/{munge,munge-socket,state,spool,log}
  chmod 0700 "$dir/munge"        # the key
  chmod 0755 "$dir/munge-socket"  # the socket, which every user's client reaches
  dir=$(cd "$dir" && pwd)

  [[ -f $dir/munge/munge.key ]] || mungekey --create --keyfile="$dir/munge/munge.key"
  chmod 0400 "$dir/munge/munge.key"
  # --force: munged refuses a socket directory below a world-writable one (/tmp) without it.
  munged --force --key-file="$dir/munge/munge.key" --socket="$dir/munge-socket/munge.socket" \
    --pid-file="$dir/munge/munged.pid" --log-file="$dir/log/munged.log" \
    --seed-file="$dir/munge/munged.seed"

  local host cpus memory user
  host=$(hostname -s)
  cpus=$(nproc)
  memory=$(($(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 / 2))  # MiB: half, for the jobs
  user=$(id -un)
  cat >"$dir/slurm.conf" <<EOF
# Written by scripts/slurm-local.sh: a one-node cluster under $dir.
ClusterName=onelearn-local
SlurmctldHost=$host
SlurmUser=$user
SlurmdUser=$user
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge-socket/munge.socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
# No cgroups in a container: processes are tracked by their parents, and tasks are not bound.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
MailProg=/bin/true
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
# Jobs may be requeued (sbatch --requeue), and the last seconds of a job are short.
JobRequeue=1
KillWait=5
MinJobAge=300
NodeName=$host CPUs=$cpus RealMemory=$memory State=UNKNOWN
PartitionName=local Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF

  slurmctld -f "$dir/slurm.conf"
  slurmd -f "$dir/slurm.conf"

  # Ready when the node answers idle (a few seconds).
  local state=""
  for _ in $(seq 100); do
    state=$(SLURM_CONF=$dir/slurm.conf sinfo --noheader --format=%T 2>/dev/null || true)
    [[ $state == idle* ]] && break
    sleep 0.2
  done
  if [[ $state != idle* ]]; then
    echo "slurm-local: the node did not become idle (state '$state'); logs in $dir/log" >&2
    stop >&2
    exit 1
  fi
  echo "slurm-local: running ($host, $cpus CPUs); export SLURM_CONF=$dir/slurm.conf"
}

case $command in
  start) start ;;
  stop) stop ;;
  *) usage ;;
esac
