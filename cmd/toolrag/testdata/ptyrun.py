# Runs a command on a new pseudo-terminal (as a user's shell would), sends
# Ctrl-C once the output shows READY_MARK, and prints the output and the
# exit status. Used by TestMakeRunCtrlC.
import os, pty, select, sys, time
mark = os.environ["READY_MARK"].encode()
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
buf, sent, deadline = b"", False, time.time() + 120
while time.time() < deadline:
    r, _, _ = select.select([fd], [], [], 0.2)
    if r:
        try:
            d = os.read(fd, 4096)
        except OSError:
            break
        if not d:
            break
        buf += d
    if not sent and mark in buf:
        time.sleep(0.5)
        os.write(fd, b"\x03")
        sent = True
_, status = os.waitpid(pid, 0)
sys.stdout.write(buf.decode(errors="replace"))
print("\nCTRL-C-SENT=%s EXIT=%d" % (sent, os.waitstatus_to_exitcode(status)))
