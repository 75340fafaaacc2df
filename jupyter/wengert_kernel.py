"""The Jupyter kernel for wengert: a thin ipykernel Kernel over a child
process running `wengert --kernel` (src/kernel.c), which answers one JSON
object a line. One notebook is one child, so one session; a restart is a
new child. Debian's python3-ipykernel only, nothing from pip.

The child's binary comes from $WENGERT_BIN (set by the kernel spec that
`make jupyter` installs), else `wengert` on PATH."""
import json
import os
import signal
import subprocess
import sys

from ipykernel.kernelbase import Kernel

WG_VERSION = "0.2.0"


class WengertProcess:
    """The child and its protocol: requests out, answers in, one a line."""

    def __init__(self):
        binary = os.environ.get("WENGERT_BIN", "wengert")
        self.proc = subprocess.Popen([binary, "--kernel"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, bufsize=0)
        self.out = self.proc.stdout
        hello = self.read()
        if not hello or "ready" not in hello:
            raise RuntimeError("wengert --kernel did not start (WENGERT_BIN=%s)" % binary)
        self.version = hello.get("version", WG_VERSION)

    def send(self, **request):
        """False when the child has ended (its answer then reads as None)."""
        try:
            self.proc.stdin.write((json.dumps(request) + "\n").encode())
            self.proc.stdin.flush()
            return True
        except OSError:
            return False

    def read(self):
        """The next answer, or None when the child has ended."""
        line = self.out.readline()
        return json.loads(line) if line else None

    def ask(self, **request):
        """A request with a single answer ({} if the child has ended)."""
        return (self.send(**request) and self.read()) or {}

    def interrupt(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)

    def close(self):
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=2)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()


class WengertKernel(Kernel):
    implementation = "wengert"
    implementation_version = WG_VERSION
    language = "wengert"
    language_version = WG_VERSION
    language_info = {
        "name": "wengert",
        "mimetype": "text/x-wengert",
        "file_extension": ".wg",
        "pygments_lexer": "text",
    }
    banner = "wengert %s: every number can be differentiated. :help for help." % WG_VERSION
    help_links = []

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.wg = WengertProcess()

    # ---------------------------------------------------------- execute

    def publish(self, kind, content):
        self.send_response(self.iopub_socket, kind, content)

    def do_execute(self, code, silent, store_history=True, user_expressions=None,
                   allow_stdin=False):
        # An interrupt (SIGINT from the notebook, to this process or its
        # group) goes on to the child, which stops the cell with the error
        # "interrupted"; here it only must not raise.
        previous = signal.signal(signal.SIGINT, lambda sig, frame: self.wg.interrupt())
        try:
            return self.execute(code, silent)
        finally:
            signal.signal(signal.SIGINT, previous)

    def execute(self, code, silent):
        count = self.execution_count
        sent = self.wg.send(op="run", code=code, name="In[%d]" % count)
        while True:
            msg = self.wg.read() if sent else None
            if msg is None:
                return self.child_ended(silent)
            if "stream" in msg:
                if not silent:
                    self.publish("stream", {"name": msg["stream"], "text": msg["text"]})
            elif "display" in msg:
                if not silent:
                    self.publish("display_data", {"data": msg["display"], "metadata": {}})
            elif "done" in msg:
                break
        if msg.get("quit"):
            # :quit ends the session; the notebook goes on in a fresh one
            self.wg.close()
            self.wg = WengertProcess()
            if not silent:
                self.publish("stream", {"name": "stdout",
                                        "text": "(:quit: the session ended; a fresh one has started)\n"})
        if msg["done"] == "ok":
            if msg.get("value") is not None and not silent:
                self.publish("execute_result", {"execution_count": count,
                                                "data": {"text/plain": msg["value"]},
                                                "metadata": {}})
            return {"status": "ok", "execution_count": count, "payload": [],
                    "user_expressions": {}}
        err = msg.get("error", {})
        report = err.get("report") or "%s\n" % err.get("message", "error")
        content = {"ename": "error", "evalue": err.get("message", ""),
                   "traceback": report.rstrip("\n").split("\n")}
        if not silent:
            self.publish("error", content)
        return dict(content, status="error", execution_count=count)

    def child_ended(self, silent):
        """The child died (it should not): report it and start a fresh one."""
        code = self.wg.proc.wait()
        self.wg = WengertProcess()
        how = "was killed by signal %d" % -code if code < 0 else "ended (exit status %d)" % code
        content = {"ename": "error", "evalue": "wengert ended",
                   "traceback": ["error: the wengert process %s; a fresh session has started" % how]}
        if not silent:
            self.publish("error", content)
        return dict(content, status="error", execution_count=self.execution_count)

    # ------------------------------------------------ completion, help

    @staticmethod
    def byte_offset(code, cursor):
        return len(code[:cursor].encode())

    @staticmethod
    def char_offset(code, offset):
        return len(code.encode()[:offset].decode(errors="ignore"))

    def do_is_complete(self, code):
        status = self.wg.ask(op="check", code=code).get("done", "unknown")
        reply = {"status": status}
        if status == "incomplete":
            reply["indent"] = ""
        return reply

    def do_complete(self, code, cursor_pos):
        if cursor_pos is None:
            cursor_pos = len(code)
        a = self.wg.ask(op="complete", code=code, cursor=self.byte_offset(code, cursor_pos))
        return {"status": "ok", "matches": a.get("matches", []),
                "cursor_start": self.char_offset(code, a.get("start", 0)),
                "cursor_end": self.char_offset(code, a.get("end", 0)), "metadata": {}}

    def do_inspect(self, code, cursor_pos, detail_level=0, omit_sections=()):
        if cursor_pos is None:
            cursor_pos = len(code)
        a = self.wg.ask(op="inspect", code=code, cursor=self.byte_offset(code, cursor_pos))
        found = bool(a.get("found"))
        return {"status": "ok", "found": found,
                "data": {"text/plain": a.get("text", "")} if found else {}, "metadata": {}}

    # ---------------------------------------------------------- the end

    def do_shutdown(self, restart):
        self.wg.close()
        if restart:
            self.wg = WengertProcess()
        return {"status": "ok", "restart": restart}


if __name__ == "__main__":
    from ipykernel.kernelapp import IPKernelApp
    IPKernelApp.launch_instance(kernel_class=WengertKernel)
