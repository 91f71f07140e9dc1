"""Scripts of the user's, run in bubblewrap (Debian's `bubblewrap`, `make test` installs it):
every namespace unshared (no network: only a loopback that is down; its own pids, users, IPC),
an unprivileged uid, the system read-only (`/usr`, a few `/etc` files), a private `/tmp`, the
user's workspace (workspace.py) as the only writable place, and limits from the tenant's
settings: address space (`prlimit --as`), CPU seconds (`--cpu`), file size, wall time (the job
is killed after it) and output (what is kept of stdout and stderr).

bubblewrap reports on `--json-status-fd` the child's pid once the sandbox stands and then its
exit code; a run without the pid line never started, and is an error, never run otherwise.
Jobs live in this replica's memory (seed 001 §4: exec is pod-local); `close()` kills and awaits
them all when process_service stops."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import shutil
import signal
import time
from dataclasses import dataclass, field

from pydantic import field_validator

from process_service.tool_args import ToolArgs, ToolError, ToolResult, parse_args, reason
from process_service.user_work.args import whole
from process_service.user_work.owner import Owner
from process_service.user_work.workspace import Workspaces
from vance.ids import new_id
from vance.json_types import JsonObject, JsonValue
from vance.work_settings import WorkSettings

logger = logging.getLogger(__name__)

MAX_CODE_CHARS = 100_000  # one argv string stays under Linux's 128 KiB per argument
MAX_WAIT_S = 60.0  # work_exec_run answers `running` after this; status tells the rest
MAX_RUNNING_PER_USER = 2
MAX_FILE_BYTES = 100 * 1024 * 1024
MAX_KEPT_JOBS = 1_000
_COMMANDS = {"python": ["python3", "-I", "-c"], "bash": ["bash", "-c"]}
_SYSTEM_RO = ("/usr", "/etc/alternatives", "/etc/ld.so.cache", "/etc/localtime")


class RunArgs(ToolArgs):
    NULL_WHEN_ABSENT = ("language", "code")

    language: str
    code: str
    # Checked in run() against the tenant's limit (work.exec.timeoutMs), which the model
    # cannot know: as the model wrote them until then.
    timeout_ms: JsonValue = None
    wait_ms: JsonValue = None

    @field_validator("language", mode="before")
    @classmethod
    def _language(cls, value: JsonValue) -> str:
        if not isinstance(value, str) or value not in _COMMANDS:
            raise reason("'language' must be python or bash")
        return value

    @field_validator("code", mode="before")
    @classmethod
    def _code(cls, value: JsonValue) -> str:
        if not isinstance(value, str) or not value.strip():
            raise reason("'code' must be the script's text")
        if len(value) > MAX_CODE_CHARS:
            raise reason(f"'code' is longer than {MAX_CODE_CHARS} characters")
        return value


class JobView(ToolResult):
    """A job as work_exec_run, _status and _kill answer it."""

    OMIT_NONE = frozenset({"error", "note", "files", "read_files_with"})

    job_id: str
    language: str
    status: str
    exit_code: int | None
    stdout: str
    stderr: str
    output_truncated: bool
    duration_ms: int
    error: str | None = None
    note: str | None = None
    files: list[str] | None = None  # work_exec_run: the workspace's files after the run
    read_files_with: str | None = None


@dataclass
class Job:
    id: str
    owner: Owner
    language: str
    timeout_ms: int
    started_at: float = field(default_factory=time.monotonic)
    status: str = "running"  # running, done, failed, timeout, killed, error
    exit_code: int | None = None
    stdout: str = ""
    stderr: str = ""
    truncated: bool = False
    error: str = ""
    duration_ms: int = 0
    kill_requested: bool = False
    proc: asyncio.subprocess.Process | None = None
    finished: asyncio.Event = field(default_factory=asyncio.Event)

    def view(self) -> JobView:
        timed_out = self.status == "timeout"
        return JobView(
            job_id=self.id,
            language=self.language,
            status=self.status,
            exit_code=self.exit_code,
            stdout=self.stdout,
            stderr=self.stderr,
            output_truncated=self.truncated,
            duration_ms=self.duration_ms or int((time.monotonic() - self.started_at) * 1000),
            error=self.error or None,
            note=f"killed after its time limit of {self.timeout_ms} ms" if timed_out else None,
        )


# Every namespace of its own (no network: only a loopback that is down), an unprivileged uid,
# nothing of the host but /usr and a few /etc files, all read-only; a private 64 MiB /tmp that
# ends with the run; then the root remounted read-only, so /workspace is the one lasting
# writable place.
_BWRAP = """bwrap --unshare-all --unshare-user --uid 1000 --gid 1000 --hostname sandbox
--die-with-parent --new-session --cap-drop ALL
--symlink usr/bin /bin --symlink usr/lib /lib --symlink usr/lib64 /lib64
--symlink usr/sbin /sbin --proc /proc --dev /dev --size 67108864 --tmpfs /tmp""".split()
_ENV = """--clearenv --setenv PATH /usr/local/bin:/usr/bin:/bin --setenv HOME /workspace
--setenv LANG C.UTF-8 --setenv PYTHONDONTWRITEBYTECODE 1""".split()


def sandbox_argv(
    workspace: str, status_fd: int, settings: WorkSettings, timeout_ms: int, command: list[str]
) -> list[str]:
    cpu_s = max(1, -(-timeout_ms // 1000))
    limits = [
        "prlimit",
        f"--as={settings.exec_memory_mb * 1024 * 1024}",
        f"--cpu={cpu_s}",
        f"--fsize={MAX_FILE_BYTES}",
        "--nofile=256",
        "--",
    ]
    system = [arg for path in _SYSTEM_RO for arg in ("--ro-bind-try", path, path)]
    work = ["--bind", workspace, "/workspace", "--remount-ro", "/", "--chdir", "/workspace"]
    status = ["--json-status-fd", str(status_fd), "--"]
    return [*limits, *_BWRAP, *system, *work, *_ENV, *status, *command]


async def _keep(stream: asyncio.StreamReader | None, limit: int) -> tuple[bytes, bool]:
    """The first `limit` bytes; the rest is read and dropped, so the script never blocks on a
    full pipe (its time limit bounds how long it may print)."""
    kept, cut = bytearray(), False
    if stream is None:
        return b"", False
    while chunk := await stream.read(65536):
        room = limit - len(kept)
        if room > 0:
            kept += chunk[:room]
        if len(chunk) > room:
            cut = True
    return bytes(kept), cut


def _status_lines(fd: int) -> list[JsonObject]:
    """bubblewrap's --json-status-fd lines, one JSON object each."""
    chunks = []
    while chunk := os.read(fd, 65536):
        chunks.append(chunk)
    out = []
    for line in b"".join(chunks).decode(errors="replace").splitlines():
        with contextlib.suppress(ValueError):
            status = json.loads(line)
            if isinstance(status, dict):
                out.append(status)
    return out


class Sandbox:
    def __init__(self, workspaces: Workspaces) -> None:
        self._workspaces = workspaces
        self._jobs: dict[str, Job] = {}
        self._by_key: dict[str, str] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    @staticmethod
    def available() -> str:
        """Why the sandbox cannot run here, or "" when it can."""
        missing = [tool for tool in ("bwrap", "prlimit") if shutil.which(tool) is None]
        if missing:
            return (
                f"{' and '.join(missing)} is not installed on this server (Debian packages "
                "bubblewrap and util-linux); scripts never run outside the sandbox"
            )
        return ""

    async def run(
        self, owner: Owner, settings: WorkSettings, args: JsonObject, key: str
    ) -> JobView:
        if key and key in self._by_key:  # a redone turn: the job it started
            job = self._jobs[self._by_key[key]]
            return await self._wait(job, min(job.timeout_ms / 1000, MAX_WAIT_S))
        parsed = parse_args(RunArgs, args)
        language, code = parsed.language, parsed.code
        # The upper bound is the tenant's work.exec.timeoutMs.
        limit = settings.exec_timeout_ms
        timeout_ms = whole(parsed.timeout_ms, "timeoutMs", 100, limit, limit)
        most = int(MAX_WAIT_S * 1000)
        wait_ms = whole(parsed.wait_ms, "waitMs", 0, most, min(timeout_ms + 1000, most))
        running = [j for j in self._jobs.values() if j.owner == owner and j.status == "running"]
        if len(running) >= MAX_RUNNING_PER_USER:
            raise ToolError(
                f"{len(running)} of your jobs are running ({', '.join(j.id for j in running)}); "
                "wait for one or stop it with work_exec_kill"
            )
        why = self.available()
        if why:
            raise ToolError(f"the sandbox cannot start: {why}")
        job = Job(new_id("job"), owner, language, timeout_ms)
        self._remember(job, key)
        workspace = str(self._workspaces.dir(owner, create=True))
        task = asyncio.create_task(
            self._execute(job, workspace, settings, [*_COMMANDS[language], code])
        )
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return await self._wait(job, min(wait_ms / 1000, MAX_WAIT_S))

    def _remember(self, job: Job, key: str) -> None:
        self._jobs[job.id] = job
        if key:
            self._by_key[key] = job.id
        if len(self._jobs) > MAX_KEPT_JOBS:  # forget the oldest finished ones
            for old in [j for j in self._jobs.values() if j.status != "running"][
                : len(self._jobs) // 2
            ]:
                del self._jobs[old.id]
            alive = set(self._jobs)
            self._by_key = {k: v for k, v in self._by_key.items() if v in alive}

    async def _wait(self, job: Job, seconds: float) -> JobView:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(seconds):
                await job.finished.wait()
        return job.view()

    def job(self, owner: Owner, job_id: JsonValue) -> Job:
        """The owner's job of `job_id` (the model's `jobId`, any JSON it sent)."""
        job = self._jobs.get(str(job_id))
        if job is None or job.owner != owner:  # another user's job is as unknown as none
            raise ToolError(f"no job {job_id!r} (jobs are kept while this server runs)")
        return job

    async def kill(self, owner: Owner, job_id: JsonValue) -> JobView:
        job = self.job(owner, job_id)
        if job.status == "running":
            job.kill_requested = True
            _kill(job.proc)
            await self._wait(job, 5)
        return job.view()

    async def _execute(
        self, job: Job, workspace: str, settings: WorkSettings, command: list[str]
    ) -> None:
        read_fd, write_fd = os.pipe()
        try:
            job.proc = await asyncio.create_subprocess_exec(
                *sandbox_argv(workspace, write_fd, settings, job.timeout_ms, command),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                pass_fds=(write_fd,),
                start_new_session=True,  # one process group: a kill reaches everything
            )
            os.close(write_fd)
            write_fd = -1
            limit = settings.exec_max_output_bytes
            reading = asyncio.gather(_keep(job.proc.stdout, limit), _keep(job.proc.stderr, limit))
            timed_out = False
            try:
                async with asyncio.timeout(job.timeout_ms / 1000):
                    await job.proc.wait()
            except TimeoutError:
                timed_out = True
                _kill(job.proc)
                await job.proc.wait()
            (out, cut_out), (err, cut_err) = await reading
            status = await asyncio.to_thread(_status_lines, read_fd)
            job.stdout, job.stderr = out.decode(errors="replace"), err.decode(errors="replace")
            job.truncated = cut_out or cut_err
            started = any("child-pid" in s for s in status)
            exit_code = next((s["exit-code"] for s in status if "exit-code" in s), None)
            job.exit_code = exit_code if isinstance(exit_code, int) else job.proc.returncode
            if timed_out:
                job.status = "timeout"
            elif job.kill_requested:
                job.status = "killed"
            elif not started:
                job.status = "error"
                job.error = (
                    f"the sandbox could not start: {job.stderr.strip()[:500] or 'no reason given'}"
                )
            else:
                job.status = "done" if job.exit_code == 0 else "failed"
        except Exception as exc:
            logger.exception("job %s failed to run", job.id)
            job.status, job.error = "error", f"the sandbox could not start: {exc}"
            _kill(job.proc)
        finally:
            if write_fd >= 0:
                os.close(write_fd)
            os.close(read_fd)
            job.duration_ms = int((time.monotonic() - job.started_at) * 1000)
            job.finished.set()

    async def close(self) -> None:
        for job in self._jobs.values():
            if job.status == "running":
                job.kill_requested = True
                _kill(job.proc)
        await asyncio.gather(*self._tasks, return_exceptions=True)


def _kill(proc: asyncio.subprocess.Process | None) -> None:
    if proc is None or proc.returncode is not None:
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
