# Runs a command on a real pseudo-terminal as its session leader and foreground process group, the way an interactive shell runs a job.
# Usage: python3 pty-driver.py <command> [args...]. The terminal's output is copied to stdout (\r\n -> \n);
# SIGUSR1 to this driver types Ctrl-C (\x03: the line discipline sends SIGINT to the foreground group).
# At the end one JSON line: {"msg": "pty command exited", "code": N} or {"msg": ..., "signal": N}.
import json, os, pty, signal, sys, termios

pid, master = pty.fork()
if pid == 0:
    # The child's stdin is the terminal: no echo, so "^C" does not land in the middle of a log line.
    attrs = termios.tcgetattr(0)
    attrs[3] &= ~termios.ECHO
    termios.tcsetattr(0, termios.TCSANOW, attrs)
    os.execvp(sys.argv[1], sys.argv[1:])

signal.signal(signal.SIGUSR1, lambda *_: os.write(master, b"\x03"))
out = sys.stdout.buffer
while True:
    try:
        data = os.read(master, 65536)
    except OSError:
        data = b""  # EIO: every holder of the terminal's slave side (the command, its app) is gone
    if not data:
        break
    out.write(data.replace(b"\r\n", b"\n"))
    out.flush()
_, status = os.waitpid(pid, 0)
end = {"code": os.WEXITSTATUS(status)} if os.WIFEXITED(status) else {"signal": os.WTERMSIG(status)}
out.write((json.dumps({"msg": "pty command exited", **end}) + "\n").encode())
out.flush()
