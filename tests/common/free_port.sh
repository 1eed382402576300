# free_port: prints a TCP port on 127.0.0.1 that nothing listens on now, below
# the ephemeral range (32768+), so no outgoing connection of a test running
# beside this one takes it before the server binds it. Source this file.
free_port() {
  /usr/bin/python3 -c '
import random, socket
for _ in range(50):
    port = random.randrange(20000, 32000)
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", port))
    except OSError:
        continue
    finally:
        s.close()
    print(port)
    break'
}
