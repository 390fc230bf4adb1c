"""A Slurm cluster across test hosts (tests/hosts.py): slurmctld on its own host, slurmd on
each node host, munged on every host that talks to Slurm (the controller, the nodes, and the
nightly's host, which submits) — as docs/operations.md#the-rebuild-on-a-slurm-cluster
deploys it, with the choices of ops/slurm-local (RequeueExit=42, batch_sched_delay=0,
kill_invalid_depend, no accounting) and a node declared down within seconds
(SlurmdTimeout=6, MessageTimeout=3) so a node cut off mid-run costs the test seconds.

Every munged has the same key (munge needs one key per cluster) and its own socket: the
hosts share the filesystem, so each socket path is the host's own, and so each host gets
its own slurm.conf differing only in AuthInfo's socket (DebugFlags=NO_CONF_HASH: Slurm
would otherwise log the differing files). munged refuses a socket directory with a
non-world-executable directory above it, so the sockets live in a directory of their own
under /tmp (removed by `down`). slurmd runs with `keep_sys` (hosts.Network.enter): it needs
the cgroup hierarchies that `ip netns exec`'s private /sys hides.
"""
import os
import shutil
import subprocess
import tempfile
import time

CONTROLLER = "slurmctl"
NODES = {"n1": "node1", "n2": "node2"}  # Slurm node name -> test host
SUBMIT = "rebuild"
HOSTS = {CONTROLLER: 41, "node1": 42, "node2": 43}
MISSING = [t for t in ("munged", "mungekey", "slurmctld", "slurmd", "sbatch", "squeue", "scontrol")
           if shutil.which(t) is None]


class SlurmHosts:
    def __init__(self, net, tmp):
        self.net = net
        self.dir = os.path.join(tmp, "slurm")
        self.run = None  # the sockets' directory under /tmp
        self.confs = {}

    def conf_text(self, host):
        d = os.path.join(self.dir, host)
        nodes = "\n".join(f"NodeName={name} NodeHostname=localhost NodeAddr={self.net.address(h)} CPUs=1 "
                          f"RealMemory=1000 State=UNKNOWN" for name, h in NODES.items())
        return f"""# A Slurm cluster across the test hosts (tests/multihost_slurm.py)
ClusterName=clickatron-hosts
SlurmctldHost=localhost({self.net.address(CONTROLLER)})
SlurmctldPort=6817
SlurmdPort=6818
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={self.run}/{host}.sock,cred_expire=10
DebugFlags=NO_CONF_HASH
StateSaveLocation={self.dir}/{CONTROLLER}/state
SlurmdSpoolDir={d}/spool
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd.pid
SlurmctldLogFile={d}/slurmctld.log
SlurmdLogFile={d}/slurmd.log
SlurmdTimeout=6
MessageTimeout=3
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0
ReturnToService=2
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MailProg=/bin/true
RequeueExit=42
DependencyParameters=kill_invalid_depend
{nodes}
PartitionName=debug Nodes={','.join(NODES)} Default=YES MaxTime=INFINITE State=UP
"""

    def env(self, host, base):
        return dict(base, SLURM_CONF=self.confs[host])

    def up(self, base_env):
        self.run = tempfile.mkdtemp(prefix=f"{self.net.run_id}-munge-")  # removed as a leftover by its pid
        os.chmod(self.run, 0o755)
        key = os.path.join(self.dir, "munge.key")
        os.makedirs(self.dir, exist_ok=True)
        subprocess.run(["mungekey", "--create", f"--keyfile={key}"], check=True, capture_output=True)
        os.chmod(key, 0o600)
        hosts = [CONTROLLER] + list(NODES.values()) + [SUBMIT]
        for host in hosts:
            d = os.path.join(self.dir, host)
            os.makedirs(os.path.join(d, "spool"), exist_ok=True)
            os.makedirs(os.path.join(d, "state"), exist_ok=True)
            self.confs[host] = os.path.join(d, "slurm.conf")
            with open(self.confs[host], "w") as f:
                f.write(self.conf_text(host))
            self.net.start(host, "munged", ["munged", "-F", f"--key-file={key}", f"--socket={self.run}/{host}.sock",
                                            f"--pid-file={self.run}/{host}.pid", f"--log-file={d}/munged.log",
                                            f"--seed-file={d}/munge.seed"])
        self._wait(lambda: all(os.path.exists(f"{self.run}/{h}.sock") for h in hosts), 20, "every munged's socket")
        self.net.start(CONTROLLER, "slurmctld", ["slurmctld", "-D", "-i"], env=self.env(CONTROLLER, base_env))
        self._wait(lambda: self.cmd(["scontrol", "ping"], base_env).returncode == 0, 30, "slurmctld")
        for name, host in NODES.items():
            self.net.start(host, "slurmd", ["slurmd", "-D", "-N", name], env=self.env(host, base_env), keep_sys=True)
        self._wait(lambda: set(self.cmd(["sinfo", "-h", "-N", "-t", "idle", "-o", "%N"], base_env).stdout.split())
                   == set(NODES), 30, "both nodes idle")

    def cmd(self, args, base_env, timeout=30):
        """A Slurm client command on the submit host."""
        return self.net.run(SUBMIT, args, env=self.env(SUBMIT, base_env), timeout=timeout)

    def running(self, base_env):
        """[(job name, node)] of the running jobs."""
        out = self.cmd(["squeue", "-h", "-t", "R", "-o", "%j %N"], base_env).stdout
        return [tuple(line.split()) for line in out.splitlines() if len(line.split()) == 2]

    def down(self):
        """The daemons are stopped with the hosts (Network.close); the sockets' directory goes."""
        if self.run and self.run.startswith(f"{tempfile.gettempdir()}/{self.net.run_id}-munge-"):
            shutil.rmtree(self.run, ignore_errors=True)

    @staticmethod
    def _wait(predicate, timeout, what):
        deadline = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() > deadline:
                raise TimeoutError(f"Slurm across hosts: timed out after {timeout}s waiting for {what}")
            time.sleep(0.1)
