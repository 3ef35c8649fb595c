#!/usr/bin/env python3
"""Unpacks a submitted zip or tar archive into a fresh folder, refusing anything unsafe.

    python3 grader/unpack.py ARCHIVE DEST [--max-total-bytes N] [--max-file-bytes N] [--max-files N]

DEST must not exist; it is created with mode 0700. Only regular files (0600) and
folders (0700) are written. Folders named __MACOSX and AppleDouble files (._*) are
skipped. The whole archive is refused when any member is unsafe: an absolute path,
a drive letter, a '..' component, a control character or invalid UTF-8 in its
name, a link, a device or FIFO, an encrypted zip member, a duplicate, or too
many entries or bytes. Backslashes count as folder separators (some Windows
tools write them), so '..\\x' and 'C:\\x' are refused like '../x' and 'C:/x'.

Exit 0: unpacked, nothing printed. Exit 1: refused or damaged; one line on stderr
that starts with 'unpack: ', and DEST is removed again. Exit 2: usage error.
Runs on Python 3.8 and later, standard library only.
"""

import argparse
import os
import re
import shutil
import signal
import stat
import sys
import tarfile
import unicodedata
import zipfile

CHUNK = 256 * 1024
DRIVE = re.compile(r"^[A-Za-z]:")
ZIP_METHODS = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA)
COMPRESSED_MAGIC = (b"\x1f\x8b", b"BZh", b"\xfd7zXZ\x00")  # gzip, bzip2, xz
ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")  # a member first, or an empty zip


class Refused(Exception):
    """The archive is unsafe or over a limit."""


class Damaged(Exception):
    """The archive cannot be read as what it claims to be."""


class CannotWrite(Exception):
    """Writing into DEST failed (disk full, name too long, ...)."""


class UsageError(Exception):
    pass


class Interrupted(BaseException):
    pass


def shown(name, limit=200):
    """The name quoted for a message, with unprintable characters escaped."""
    out = []
    for c in name:
        if c.isprintable():
            out.append(c)
        elif ord(c) < 0x100:
            out.append("\\x%02x" % ord(c))
        else:
            out.append("\\u%04x" % ord(c))
    text = "".join(out)
    if len(text) > limit:
        text = text[:limit] + "..."
    return "'" + text + "'"


def safe_path(name):
    """The member's path as a list of components, or Refused. [] is the root itself."""
    member = "member " + shown(name)
    if not name:
        raise Refused("a member has an empty name")
    for c in name:
        if unicodedata.category(c) == "Cc":
            raise Refused(member + " has a control character in its name")
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        raise Refused(member + " has a name that is not valid UTF-8") from None
    path = name.replace("\\", "/")
    if path.startswith("/"):
        raise Refused(member + " has an absolute path")
    if DRIVE.match(path):
        raise Refused(member + " starts with a drive letter")
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise Refused(member + " leaves the archive's folder")
    if any(len(p.encode("utf-8")) > 255 for p in parts):
        raise Refused(member + " has a name longer than 255 bytes")
    return parts


def skipped(name):
    """Mac metadata that student zips often carry (__MACOSX/, ._*): skipped silently, never written."""
    parts = [p for p in name.replace("\\", "/").split("/") if p]
    return "__MACOSX" in parts or (bool(parts) and parts[-1].startswith("._"))


def unwanted(name, is_dir, only):
    """With --only NAME, every member but files called NAME is skipped: never written, never
    counted against the size limits (a student's build folder or binaries do not matter)."""
    if not only:
        return False
    parts = [p for p in name.replace("\\", "/").split("/") if p]
    return is_dir or not parts or parts[-1] != only


class Plan:
    """The members to write, checked against the limits and each other before any is written."""

    def __init__(self, args):
        self.args = args
        self.entries = 0
        self.declared = 0
        self.files = {}  # path -> name in the archive
        self.dirs = {}  # path -> name in the archive, or None when only implied
        self.items = []  # (kind, path, member, name)

    def count(self, name):
        self.entries += 1
        if self.entries > self.args.max_files:
            raise Refused("the archive has more than %d entries (member %s is one too many)"
                          % (self.args.max_files, shown(name)))

    def add(self, name, parts, is_dir, size, member):
        key = "/".join(parts)
        if not parts:
            if is_dir:
                return  # the archive's own root, such as './'
            raise Refused("member %s has no file name" % shown(name))
        for i in range(1, len(parts)):
            above = "/".join(parts[:i])
            if above in self.files:
                raise Refused("member %s collides with member %s, a file"
                              % (shown(name), shown(self.files[above])))
        if key in self.files:
            if is_dir:
                raise Refused("member %s collides with member %s, a file"
                              % (shown(name), shown(self.files[key])))
            raise Refused("member %s appears twice in the archive" % shown(name))
        if is_dir:
            if self.dirs.get(key) is None:
                self.dirs[key] = name
                self.items.append(("dir", parts, member, name))
            # a folder listed twice is harmless: nothing is written twice
        else:
            if key in self.dirs:
                other = self.dirs[key]
                raise Refused("member %s collides with %s" % (shown(name), "a folder of the same name"
                                                             if other is None else "member %s, a folder" % shown(other)))
            self.check_size(name, size)
            self.files[key] = name
            self.items.append(("file", parts, member, name))
        for i in range(1, len(parts)):
            self.dirs.setdefault("/".join(parts[:i]), None)

    def check_size(self, name, size):
        """Refuses on the size the archive declares; writing counts the real bytes again."""
        if size > self.args.max_file_bytes:
            raise Refused("member %s is larger than the limit of %d bytes per file"
                          % (shown(name), self.args.max_file_bytes))
        self.declared += size
        if self.declared > self.args.max_total_bytes:
            raise Refused("member %s takes the archive past the limit of %d bytes in total"
                          % (shown(name), self.args.max_total_bytes))


# ---- reading the two formats ----

def plan_zip(archive, plan):
    for info in archive.infolist():
        name = info.orig_filename  # zipfile cuts filename at a NUL; the original keeps it
        plan.count(name)
        if skipped(name) or unwanted(name, name.endswith(("/", "\\")), plan.args.only):
            continue
        parts = safe_path(name)
        member = "member " + shown(name)
        fmt = stat.S_IFMT(info.external_attr >> 16)
        kind = {stat.S_IFLNK: "a symbolic link", stat.S_IFCHR: "a character device",
                stat.S_IFBLK: "a block device", stat.S_IFIFO: "a FIFO",
                stat.S_IFSOCK: "a socket"}.get(fmt)
        if kind:
            raise Refused("%s is %s" % (member, kind))
        if fmt not in (0, stat.S_IFREG, stat.S_IFDIR):
            raise Refused(member + " is not a regular file or folder")
        if info.flag_bits & 0x41 or info.compress_type == 99:  # traditional, strong or AES
            raise Refused(member + " is encrypted")
        is_dir = name.endswith(("/", "\\")) or fmt == stat.S_IFDIR
        if is_dir:
            if info.file_size:
                raise Damaged(member + " is a folder with contents")
        elif info.compress_type not in ZIP_METHODS:
            raise Refused("%s uses a compression method this unpacker cannot read (%d)"
                          % (member, info.compress_type))
        plan.add(name, parts, is_dir, info.file_size, info)


def plan_tar(archive, plan):
    for info in archive:
        name = info.name
        plan.count(name)
        if skipped(name) or unwanted(name, info.isdir(), plan.args.only):
            continue
        parts = safe_path(name)
        member = "member " + shown(name)
        if info.issym():
            raise Refused("%s is a symbolic link (to %s)" % (member, shown(info.linkname)))
        if info.islnk():
            raise Refused("%s is a hard link (to %s)" % (member, shown(info.linkname)))
        kind = {tarfile.CHRTYPE: "a character device", tarfile.BLKTYPE: "a block device",
                tarfile.FIFOTYPE: "a FIFO"}.get(info.type)
        if kind:
            raise Refused("%s is %s" % (member, kind))
        if not (info.isreg() or info.isdir()):
            raise Refused(member + " is not a regular file or folder")
        plan.add(name, parts, info.isdir(), 0 if info.isdir() else info.size, info)


def drain(stream, limit):
    """Reads a compressed stream to its end so that its checksum and length are checked."""
    extra = 0
    while True:
        chunk = stream.read(CHUNK)
        if not chunk:
            return
        extra += len(chunk)
        if extra > limit:
            raise Refused("more than %d bytes follow the end of the tar archive" % limit)


# ---- writing ----

def make_dir(path):
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        if not stat.S_ISDIR(os.lstat(path).st_mode):
            raise
    os.chmod(path, 0o700)


def write_all(plan, open_member, dest):
    """Writes the planned members under dest, counting the bytes really written."""
    args = plan.args
    made = set()
    total = 0
    for kind, parts, member, name in plan.items:
        encoded = [p.encode("utf-8") for p in parts]
        target = os.path.join(dest, *encoded)
        try:
            for i in range(1, len(encoded) + (kind == "dir")):
                above = tuple(encoded[:i])
                if above not in made:
                    make_dir(os.path.join(dest, *above))
                    made.add(above)
        except OSError as e:
            raise CannotWrite("cannot create the folder for member %s: %s"
                              % (shown(name), e.strerror or e)) from None
        if kind == "dir":
            continue
        try:
            source = open_member(member)
        except Exception as e:
            raise Damaged("reading member %s: %s" % (shown(name), e)) from None
        try:
            flags = (os.O_WRONLY | os.O_CREAT | os.O_EXCL
                     | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
            try:
                fd = os.open(target, flags, 0o600)
                os.fchmod(fd, 0o600)
                out = os.fdopen(fd, "wb")
            except OSError as e:
                raise CannotWrite("cannot write member %s: %s" % (shown(name), e.strerror or e)) from None
            with out:
                written = 0
                while True:
                    try:
                        chunk = source.read(CHUNK)
                    except Exception as e:  # zlib, CRC, truncation, ...
                        raise Damaged("reading member %s: %s" % (shown(name), str(e) or type(e).__name__)) from None
                    if not chunk:
                        break
                    written += len(chunk)
                    total += len(chunk)
                    if written > args.max_file_bytes:
                        raise Refused("member %s is larger than the limit of %d bytes per file"
                                      % (shown(name), args.max_file_bytes))
                    if total > args.max_total_bytes:
                        raise Refused("member %s takes the archive past the limit of %d bytes in total"
                                      % (shown(name), args.max_total_bytes))
                    try:
                        out.write(chunk)
                    except OSError as e:
                        raise CannotWrite("cannot write member %s: %s"
                                          % (shown(name), e.strerror or e)) from None
                try:
                    out.flush()
                except OSError as e:
                    raise CannotWrite("cannot write member %s: %s" % (shown(name), e.strerror or e)) from None
        finally:
            source.close()
        size = member.file_size if isinstance(member, zipfile.ZipInfo) else member.size
        if written != size:
            raise Damaged("member %s holds %d bytes, not the %d its header declares"
                          % (shown(name), written, size))


# ---- the archive as a whole ----

def detect(path):
    """'zip' or 'tar' from the content, or Refused."""
    with open(path, "rb") as f:
        head = f.read(512)
    if head.startswith(ZIP_MAGIC):
        return "zip"
    if head.startswith(COMPRESSED_MAGIC) or head[257:262] == b"ustar":
        return "tar"
    if zipfile.is_zipfile(path):
        return "zip"  # data before the first member, such as a self-extractor
    try:
        if tarfile.is_tarfile(path):
            return "tar"  # an old tar without the ustar magic
    except Exception:
        pass
    raise Refused("%s is neither a zip nor a tar archive" % shown(os.path.basename(path)))


def unpack(path, dest, args):
    plan = Plan(args)
    if detect(path) == "zip":
        try:
            archive = zipfile.ZipFile(path)
        except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, ValueError) as e:
            raise Damaged(str(e)) from None
        with archive:
            plan_zip(archive, plan)
            write_all(plan, archive.open, dest)
        return
    with open(path, "rb") as f:
        compressed = f.read(8).startswith(COMPRESSED_MAGIC)
    try:
        archive = tarfile.open(path, "r:*", encoding="utf-8", errors="surrogateescape")
    except tarfile.CompressionError as e:
        raise Refused("the archive's compression cannot be read here: %s" % e) from None
    except tarfile.ReadError as e:
        raise Damaged("no readable tar archive in it (%s)" % e) from None
    with archive:
        plan_tar(archive, plan)
        if compressed:
            drain(archive.fileobj, args.max_total_bytes)
        write_all(plan, archive.extractfile, dest)


def positive(text):
    try:
        value = int(text, 10)
    except ValueError:
        raise argparse.ArgumentTypeError("%r is not a whole number" % text) from None
    if value <= 0:
        raise argparse.ArgumentTypeError("%r is not above zero" % text)
    return value


class Parser(argparse.ArgumentParser):
    def error(self, message):
        sys.stderr.write("unpack: %s\n%s" % (message, self.format_usage()))
        sys.exit(2)


def parse(argv):
    parser = Parser(prog="unpack.py", allow_abbrev=False,
                    description="Unpacks a zip or tar archive safely into a new folder.")
    parser.add_argument("archive", metavar="ARCHIVE")
    parser.add_argument("dest", metavar="DEST", help="created here; must not exist")
    parser.add_argument("--max-total-bytes", type=positive, default=64 << 20, metavar="N",
                        help="bytes written in all (default 64 MiB)")
    parser.add_argument("--max-file-bytes", type=positive, default=4 << 20, metavar="N",
                        help="bytes written per file (default 4 MiB)")
    parser.add_argument("--only", metavar="NAME", default="",
                        help="write only the files called NAME (e.g. kernel.cu); skip everything else")
    parser.add_argument("--max-files", type=positive, default=2000, metavar="N",
                        help="entries in the archive, folders and skipped ones too (default 2000)")
    return parser.parse_args(argv)


def on_signal(signum, frame):
    raise Interrupted(signum)


def main(argv):
    args = parse(argv)
    try:
        if not os.path.isfile(args.archive):
            raise UsageError("%s is not a file" % shown(args.archive))
        if not os.access(args.archive, os.R_OK):
            raise UsageError("cannot read %s" % shown(args.archive))
        try:
            os.mkdir(args.dest, 0o700)
        except FileExistsError:
            raise UsageError("DEST %s already exists" % shown(args.dest)) from None
        except OSError as e:
            raise UsageError("cannot create DEST %s: %s" % (shown(args.dest), e.strerror or e)) from None
    except UsageError as e:
        sys.stderr.write("unpack: %s\n" % e)
        return 2

    dest = os.fsencode(args.dest)
    done = False
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, on_signal)
    try:
        os.chmod(dest, 0o700)
        unpack(args.archive, dest, args)
        done = True
        return 0
    except Refused as e:
        message = "refused: %s" % e
    except CannotWrite as e:
        message = str(e)
    except Damaged as e:
        message = "the archive is damaged: %s" % e
    except (KeyboardInterrupt, Interrupted):
        message = "interrupted"
    except MemoryError:
        message = "the archive is damaged: it needs more memory than there is"
    except Exception as e:  # whatever a reader raises on bad data: zlib, EOF, struct, ...
        message = "the archive is damaged: %s" % (str(e) or type(e).__name__)
    finally:
        if not done:
            shutil.rmtree(dest, ignore_errors=True)
    sys.stderr.write("unpack: %s\n" % " ".join(message.split()))
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
