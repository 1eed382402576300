#!/usr/bin/python3
"""unit_exec.py UNIT ENV_FILE CREDENTIALS_DIR [KEY=VALUE]...: the unit's ExecStart as
systemd would run it, one argument per line: the environment file read as systemd reads
it (KEY=value, optional quotes), then KEY=VALUE overrides; `$VAR` alone as a word becomes
its value split at whitespace (zero or more words), `${VAR}` is replaced in place, and %d
is the credentials directory."""
import re
import shlex
import sys


def main(unit, env_file, credentials, *overrides):
    env = {}
    for line in open(env_file).read().splitlines() + list(overrides):
        if line.strip() and not line.lstrip().startswith("#"):
            key, value = line.split("=", 1)
            env[key.strip()] = " ".join(shlex.split(value)) if value.strip() else ""
    text = re.sub(r"\\\n", " ", open(unit).read())
    command = next(line for line in text.splitlines() if line.startswith("ExecStart="))[len("ExecStart="):]
    argv = []
    for word in command.split():
        if re.fullmatch(r"\$[A-Z_]+", word):
            argv += env.get(word[1:], "").split()
        else:
            word = re.sub(r"\$\{([A-Z_]+)\}", lambda m: env.get(m.group(1), ""), word)
            argv.append(word.replace("%d", credentials))
    print("\n".join(argv))


if __name__ == "__main__":
    main(*sys.argv[1:])
