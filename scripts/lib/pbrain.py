"""A Gomocup engine (`gomoku pbrain`, or any pbrain program) driven over
its pipes, for the scripts that measure play: bench-play, bench-defend."""
import subprocess


class Brain:
    def __init__(self, cmd):
        self.p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, bufsize=1)
        self.note = ""

    def died(self):
        """The error for an engine that has exited: its status and the
        first line of what it said on stderr."""
        self.note = self.note or self.p.stderr.read().strip()   # read once: a second is empty
        why = (self.note.splitlines() or ["no message"])[0]
        return RuntimeError("pbrain exited (status %s): %s" % (self.p.wait(), why))

    def send(self, line):
        """One line to the engine; one that has exited (its pipe closed)
        raises died()'s error, whichever of write and read sees it first."""
        try:
            self.p.stdin.write(line + "\n")
            self.p.stdin.flush()
        except BrokenPipeError:
            raise self.died() from None

    def until(self, pred):
        """The engine's lines up to and including the first for which pred
        holds; an ERROR line or the engine's exit raises RuntimeError."""
        msgs = []
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise self.died()
            line = line.strip()
            if line.startswith("ERROR"):
                raise RuntimeError(line)
            msgs.append(line)
            if pred(line):
                return msgs

    def start(self, size, time_ms):
        """A game of size x size at time_ms a move, no game clock."""
        self.send("START %d" % size)
        self.until(lambda l: l == "OK")
        self.send("INFO timeout_turn %d" % time_ms)
        self.send("INFO timeout_match 0")

    def play_from(self, stones):
        """The engine's move in a new game from stones (x, y, field: 1 its
        own, 2 the opponent's): its lines, the move ("x,y") last."""
        self.send("RESTART")
        self.until(lambda l: l == "OK")
        self.send("BOARD")
        for x, y, f in stones:
            self.send("%d,%d,%d" % (x, y, f))
        self.send("DONE")
        return self.until(lambda l: l[:1].isdigit())

    def close(self):
        """Ends the engine; one that died or hangs does not hide the error
        that brought the caller here."""
        try:
            self.send("END")
            self.p.wait(timeout=30)
        except RuntimeError:   # it had exited already: died() kept its stderr
            return
        except (OSError, subprocess.TimeoutExpired):
            self.p.kill()
            self.p.wait()
        self.note = self.p.stderr.read().strip()
