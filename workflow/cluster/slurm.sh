#!/usr/bin/env bash
# A one-node SLURM cluster on this machine, for testing the slurm profile end to end (as root).
#
#   workflow/cluster/slurm.sh install   # apt-get install slurm-wlm munge
#   workflow/cluster/slurm.sh start     # munge, slurmctld, slurmd; partitions cpu (default) and gpu
#   workflow/cluster/slurm.sh stop
#
# The node declares MIRAGE_SLURM_GPUS (default 2) stand-in GPUs as GRES: AutoDetect=off, File= pointing at
# character devices made with mknod (copies of /dev/null), so `sbatch -p gpu --gres=gpu:2` runs with
# CUDA_VISIBLE_DEVICES=0,1 although no GPU exists. Process tracking is proctrack/linuxproc and TaskPlugin is
# task/none (no cgroups needed). There is no accounting database: finished jobs are written by jobcomp/filetxt
# to $STATE/jobcomp.log (JobId, JobState, Partition, WorkDir; its Tres lists cpu, mem and node only), and a
# TaskProlog prints each job's partition and CUDA_VISIBLE_DEVICES into its output, so tests check placement
# from those. Snakemake then
# needs `--slurm-status-command squeue --slurm-no-account`.
set -euo pipefail

STATE=${MIRAGE_SLURM_STATE:-/var/lib/mirage-slurm}
GPUS=${MIRAGE_SLURM_GPUS:-2}
# Declared (not real) size of the node, so the profile's requests (8 CPUs, 256 GB for model jobs) fit;
# nothing is enforced without cgroups, and slurmd accepts the declaration (SlurmdParameters=config_overrides).
NODE_CPUS=${MIRAGE_SLURM_CPUS:-16}
NODE_MEM_MB=${MIRAGE_SLURM_MEM_MB:-512000}
CONF=/etc/slurm

install() {
    command -v slurmctld >/dev/null && command -v munged >/dev/null && return
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -q slurm-wlm munge
}

write_config() {
    local host
    host=$(hostname -s)
    mkdir -p "$CONF" "$STATE/ctld" "$STATE/d" /var/log/slurm /run/munge
    local files=()
    for i in $(seq 0 $((GPUS - 1))); do
        [ -e "$STATE/gpu$i" ] || mknod "$STATE/gpu$i" c 1 3
        files+=("$STATE/gpu$i")
    done
    cat > "$STATE/task_prolog.sh" <<'EOF'
#!/bin/sh
echo "print mirage-slurm: job=$SLURM_JOB_ID partition=$SLURM_JOB_PARTITION cuda=${CUDA_VISIBLE_DEVICES:-none}"
EOF
    chmod +x "$STATE/task_prolog.sh"
    cat > "$CONF/slurm.conf" <<EOF
ClusterName=mirage
SlurmctldHost=$host
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
TaskProlog=$STATE/task_prolog.sh
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
GresTypes=gpu
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$STATE/ctld
SlurmdSpoolDir=$STATE/d
SlurmctldPidFile=$STATE/slurmctld.pid
SlurmdPidFile=$STATE/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/filetxt
JobCompLoc=$STATE/jobcomp.log
MinJobAge=600
ReturnToService=2
SchedulerParameters=batch_sched_delay=0
NodeName=$host CPUs=$NODE_CPUS RealMemory=$NODE_MEM_MB Gres=gpu:$GPUS State=UNKNOWN
PartitionName=cpu Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
PartitionName=gpu Nodes=$host MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
EOF
    local IFS=,
    cat > "$CONF/gres.conf" <<EOF
AutoDetect=off
NodeName=$host Name=gpu File=${files[*]}
EOF
    rm -f "$CONF/cgroup.conf"  # autodetected; no cgroup plugin is used with proctrack/linuxproc + task/none
}

start() {
    install
    write_config
    [ -s /etc/munge/munge.key ] || { mkdir -p /etc/munge; dd if=/dev/urandom of=/etc/munge/munge.key bs=1k count=1 status=none; }
    chown -R munge:munge /etc/munge /run/munge /var/lib/munge /var/log/munge 2>/dev/null || true
    chmod 400 /etc/munge/munge.key
    pgrep -x munged >/dev/null || su -s /bin/sh munge -c "/usr/sbin/munged"
    stop_daemons
    slurmctld -c -i
    slurmd -c
    for _ in $(seq 60); do
        if sinfo -h -N -o %T 2>/dev/null | grep -qE '^(idle|mixed|allocated)'; then
            sinfo
            return
        fi
        scontrol update nodename="$(hostname -s)" state=resume 2>/dev/null || true
        sleep 1
    done
    echo "slurm did not come up; see /var/log/slurm/" >&2
    exit 1
}

stop_daemons() {
    local pid
    for pidfile in "$STATE/slurmd.pid" "$STATE/slurmctld.pid"; do
        pid=$(cat "$pidfile" 2>/dev/null || true)
        if [ -n "$pid" ] && kill "$pid" 2>/dev/null; then
            for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
        fi
        rm -f "$pidfile"
    done
}

stop() {
    stop_daemons
    if [ -s /run/munge/munged.pid ]; then kill "$(cat /run/munge/munged.pid)" 2>/dev/null || true; fi
}

case "${1:-}" in
    install) install ;;
    start) start ;;
    stop) stop ;;
    *) echo "usage: $0 install|start|stop" >&2; exit 2 ;;
esac
