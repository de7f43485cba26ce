"""The model-building process of a dynamics node: a Python interpreter of its own, so that reading a description
and building a model (tens of milliseconds of Python for an arm, more for a humanoid or a xacro) never hold the
interpreter the joint-state callbacks run in.

The node sends ``(function, arguments)`` pickled over the process's stdin and reads the pickled result (or the
exception raised) from its stdout, one request at a time. The process is started at the first request and ends
when the node closes it (or when the node's process ends: it reads end-of-file); it ignores SIGINT and SIGTERM,
which are the node's to act on (Ctrl-C reaches the whole process group). It runs at :data:`NICENESS` (its C
compiler runs too): on a busy machine the node's joint-state answers get the processor before a model's build.
"""
import os
import pickle
import signal
import struct
import subprocess
import sys

from ..errors import ModelError

HEADER = struct.Struct("<Q")  # the length of the pickled frame that follows
#: The builder process's scheduling niceness above the node's (Linux's 0-19 scale): a build of new numbers (a second
#: or more of the C compiler for an arm) competed with the joint-state callbacks for a 2-core machine's processors;
#: niced, it takes what they leave (a swap of new numbers comes later on a busy machine, the answers do not).
NICENESS = 10


def write_frame(stream, payload):
    stream.write(HEADER.pack(len(payload)) + payload)
    stream.flush()


def read_frame(stream):
    """The next frame, or None at end-of-file."""
    header = stream.read(HEADER.size)
    if len(header) < HEADER.size:
        return None
    return stream.read(HEADER.unpack(header)[0])


class BuilderProcess:
    """Calls functions in the builder process; from one thread at a time."""

    def __init__(self):
        self.process = None

    def call(self, function, *arguments):
        """``function(*arguments)`` in the builder process: its result, or the exception it raised raised here."""
        if self.process is None or self.process.poll() is not None:
            self.process = subprocess.Popen([sys.executable, "-m", __name__], stdin=subprocess.PIPE,
                                            stdout=subprocess.PIPE)
        write_frame(self.process.stdin, pickle.dumps((function, arguments)))
        frame = read_frame(self.process.stdout)
        if frame is None:
            self.process = None
            raise ModelError("the model-building process ended unexpectedly; request the change again")
        succeeded, value = pickle.loads(frame)
        if not succeeded:
            raise value
        return value

    def close(self):
        if self.process is not None:
            self.process.stdin.close()
            try:
                self.process.wait(timeout=5.0)
            except subprocess.TimeoutExpired:
                self.process.kill()
            self.process.stdout.close()
            self.process = None


def serve():
    """The builder process: answer requests until end-of-file."""
    for number in (signal.SIGINT, signal.SIGTERM):
        signal.signal(number, signal.SIG_IGN)
    os.nice(NICENESS)
    requests, answers = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # a print in a build must not corrupt the answers
    while (frame := read_frame(requests)) is not None:
        function, arguments = pickle.loads(frame)
        try:
            answer = (True, function(*arguments))
        except Exception as exc:  # noqa: BLE001 -- handed to the node, which refuses the request with it
            answer = (False, exc)
        try:
            payload = pickle.dumps(answer)
        except Exception as exc:  # noqa: BLE001 -- an answer that cannot travel is a refused request
            payload = pickle.dumps((False, ModelError(f"the model cannot be handed to the node ({exc})")))
        write_frame(answers, payload)


if __name__ == "__main__":
    serve()
