#!/bin/bash
# A single-node Slurm for tests, without systemd: munged, slurmctld, slurmd on this host.
#   tests/slurm/local-slurm.sh start     prints "export SLURM_CONF=..." on success
#   tests/slurm/local-slurm.sh stop      stops the daemons by pid file (each one only if we started it)
# Needs root and Debian's slurmctld slurmd slurm-client munge. State lives in $BATON_SLURM_DIR.
set -uo pipefail
dir=${BATON_SLURM_DIR:-/tmp/baton-slurm}
conf=$dir/slurm.conf
host=localhost

stop_pid() {  # $1 = pid file
  [ -s "$1" ] || return 0
  local pid; pid=$(cat "$1")
  kill -TERM "$pid" 2>/dev/null || { rm -f "$1"; return 0; }
  for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || { rm -f "$1"; return 0; }; sleep 0.1; done
  echo "local-slurm: pid $pid ignored SIGTERM, sending SIGKILL" >&2
  kill -KILL "$pid" 2>/dev/null; rm -f "$1"
}

stop() {
  stop_pid "$dir/slurmd.pid"
  stop_pid "$dir/slurmctld.pid"
  # munged only if this script started it (it may belong to the host).
  [ -f "$dir/munged.ours" ] && { stop_pid /run/munge/munged.pid; rm -f "$dir/munged.ours"; }
  return 0
}

start() {
  for exe in munged slurmctld slurmd srun sinfo; do
    command -v "$exe" >/dev/null 2>&1 || [ -x "/usr/sbin/$exe" ] || { echo "local-slurm: $exe not installed" >&2; return 1; }
  done
  [ "$(id -u)" -eq 0 ] || { echo "local-slurm: needs root" >&2; return 1; }
  mkdir -p "$dir"/{ctld,spool,log}
  if [ ! -s /etc/munge/munge.key ]; then
    mungekey --create --force --keyfile=/etc/munge/munge.key >/dev/null || return 1
    chown munge:munge /etc/munge/munge.key; chmod 400 /etc/munge/munge.key
  fi
  install -d -o munge -g munge -m 755 /run/munge
  if ! munge -n >/dev/null 2>&1; then
    runuser -u munge -- /usr/sbin/munged || return 1
    touch "$dir/munged.ours"
    for _ in $(seq 50); do munge -n >/dev/null 2>&1 && break; sleep 0.1; done
  fi
  munge -n | unmunge >/dev/null || { echo "local-slurm: munge does not work" >&2; return 1; }
  # 8 CPUs declared so that 4 tasks fit on a 2-core machine without --overcommit.
  cat > "$conf" <<CONF
ClusterName=baton-ci
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CryptoType=crypto/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
SlurmdParameters=config_overrides
MailProg=/bin/true
StateSaveLocation=$dir/ctld
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
NodeName=$host CPUs=8 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF
  export SLURM_CONF=$conf
  # -c: no jobs recovered from an earlier run's state (one left running would keep the node busy).
  /usr/sbin/slurmctld -c -f "$conf" || { stop; return 1; }
  /usr/sbin/slurmd -f "$conf" -N "$host" || { stop; return 1; }
  local state=""
  for _ in $(seq 100); do
    state=$(sinfo -h -N -o %t 2>/dev/null || true)
    [ "$state" = idle ] && break
    sleep 0.2
  done
  if [ "$state" != idle ]; then
    echo "local-slurm: node not idle ($state)" >&2; tail -n 20 "$dir"/log/*.log >&2; stop; return 1
  fi
  echo "export SLURM_CONF=$conf"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
