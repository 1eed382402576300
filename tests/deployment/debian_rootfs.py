#!/usr/bin/python3
"""debian_rootfs.py PACKAGES_FILE ROOTFS: a root filesystem made of the files of the listed
Debian packages and of everything they depend on (Depends, Pre-Depends), as this Debian
host has them installed (dpkg's database, nothing downloaded): what `apt-get install` of
those packages would put into the image, minus the base image's other packages."""
import os
import re
import shutil
import subprocess
import sys


def installed():
    """{package: (depends, provides)} for every installed package of this architecture or all."""
    fmt = "${Package}\t${Status}\t${Depends}, ${Pre-Depends}\t${Provides}\n"
    out = subprocess.run(["dpkg-query", "-W", "-f", fmt], capture_output=True, text=True, check=True).stdout
    packages, provided = {}, {}
    for line in out.splitlines():
        name, status, depends, provides = line.split("\t")
        if not status.endswith(" installed"):
            continue
        packages[name] = [alt for alt in depends.split(",") if alt.strip()]
        for p in provides.split(","):
            if p.strip():
                provided.setdefault(re.sub(r"[ (:].*", "", p.strip()), name)
    return packages, provided


def closure(wanted, packages, provided):
    """wanted and their dependencies; of alternatives (a | b) the first one installed."""
    seen, pending = set(), list(wanted)
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        if name not in packages:
            sys.exit(f"debian_rootfs.py: {name} is not installed here")
        seen.add(name)
        for alternatives in packages[name]:
            names = [re.sub(r"[ (:].*", "", a.strip()) for a in alternatives.split("|")]
            found = [n for n in names if n in packages] or [provided[n] for n in names if n in provided]
            if found:
                pending.append(found[0])
    return sorted(seen)


def copy_files(package, root):
    listing = subprocess.run(["dpkg-query", "-L", package], capture_output=True, text=True, check=True).stdout
    for path in listing.splitlines():
        if not path.startswith("/") or os.path.isdir(path) and not os.path.islink(path):
            continue
        if not os.path.lexists(path):  # dropped by path-exclude (docs) or diverted
            continue
        target = root + path
        os.makedirs(os.path.dirname(target), exist_ok=True)
        if not os.path.lexists(target):
            shutil.copy2(path, target, follow_symlinks=False)


def main(packages_file, root):
    with open(packages_file) as f:
        wanted = [w for line in f for w in line.split("#")[0].split()]
    # Debian 12 merges /usr: /lib, /bin and /sbin are links into it, as in the base image.
    for d in ("usr/lib", "usr/lib64", "usr/bin", "usr/sbin"):
        os.makedirs(os.path.join(root, d), exist_ok=True)
    for link in ("lib", "lib64", "bin", "sbin"):
        os.symlink("usr/" + link, os.path.join(root, link))
    packages, provided = installed()
    chosen = closure(wanted, packages, provided)
    for name in chosen:
        copy_files(name, root)
    print(f"root filesystem: {len(chosen)} Debian packages: {' '.join(chosen)}")


if __name__ == "__main__":
    main(*sys.argv[1:])
