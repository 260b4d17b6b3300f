#!/usr/bin/env bash
# A one-node SLURM on this machine for tests/test_slurm.py: `.ci/slurm.sh start DIR`
# writes DIR/slurm.conf (this machine's CPUs and memory, one partition `debug`,
# auth/none) and starts slurmctld and slurmd as root with their state in DIR;
# `.ci/slurm.sh stop DIR` stops them; `.ci/slurm.sh install` installs Debian's
# slurm-wlm where it is missing, best effort (where it cannot, the tests skip and
# say why).
# Tests find the daemons through SLURM_CONF=DIR/slurm.conf.
set -euo pipefail
what=${1:?install, start or stop}
if [ "$what" = install ]; then
    command -v slurmctld >/dev/null \
        || apt-get install -y -q slurm-wlm >/dev/null 2>&1 \
        || { apt-get update -q >/dev/null 2>&1 \
            && apt-get install -y -q slurm-wlm >/dev/null 2>&1; } \
        || echo "warning: slurm-wlm could not be installed; the SLURM tests skip"
    exit 0
fi
dir=$(realpath -m "${2:?a folder for the daemon state}")
conf=$dir/slurm.conf
case $what in
start)
    mkdir -p "$dir/state" "$dir/spool" "$dir/log"
    # nproc obeys OMP_NUM_THREADS (1 in the tests): the node would have 1 CPU
    cpus=$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)
    mem=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 - 1024 ))
    cat > "$conf" <<CONF
ClusterName=ci
SlurmctldHost=localhost
AuthType=auth/none
CredType=cred/none
SlurmUser=root
SlurmdUser=root
SlurmctldPort=6817
SlurmdPort=6818
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
InactiveLimit=0
KillWait=5
MinJobAge=60
NodeName=localhost CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
CONF
    export SLURM_CONF=$conf
    slurmctld -f "$conf"
    slurmd -f "$conf"
    for _ in $(seq 30); do
        if sinfo -h -o %t 2>/dev/null | grep -qE '^(idle|mix|alloc)'; then
            echo "SLURM up: SLURM_CONF=$conf"
            exit 0
        fi
        sleep 1
    done
    echo "SLURM did not come up; logs in $dir/log" >&2
    exit 1
    ;;
stop)
    for d in slurmd slurmctld; do
        if [ -f "$dir/$d.pid" ]; then
            kill "$(cat "$dir/$d.pid")" 2>/dev/null || true
        fi
    done
    ;;
*)
    echo "usage: $0 start|stop DIR" >&2
    exit 2
    ;;
esac
