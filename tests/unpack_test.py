#!/usr/bin/env python3
"""Tests grader/unpack.py on honest and hostile archives built here at run time.

    python3 tests/unpack_test.py path/to/grader/unpack.py [unittest options]

Every archive is made in a temporary folder; the script runs as a subprocess on each.
"""

import io
import os
import random
import shutil
import stat
import struct
import subprocess
import sys
import tarfile
import tempfile
import time
import unittest
import warnings
import zipfile
import zlib

SCRIPT = None
MiB = 1 << 20

# A small chapters tree: path -> contents. Folders end with '/'.
TREE = {
    "chapters/00_naive/kernel.cu": b"__global__ void reduce(const float* in, float* out) {}\n",
    "chapters/00_naive/README.md": b"# Naive\n",
    "chapters/01_divergence/kernel.cu": b"// divergence\n" * 100,
    "chapters/01_divergence/notes/empty.txt": b"",
    "chapters/02_bank_conflicts/data.bin": random.Random(7).getrandbits(8 * 300 * 1024).to_bytes(300 * 1024, "little"),
    "chapters/notes/r\u00e9sum\u00e9 \u00fcber.md": "caf\u00e9\n".encode("utf-8"),
    "chapters/empty_folder/": None,
}


def tree_files(prefix=""):
    return {prefix + k: v for k, v in TREE.items() if v is not None}


# ---- building archives ----

def write_zip(path, members, **kw):
    """members: list of (name, data) or (ZipInfo, data). Duplicate-name warnings are expected."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with zipfile.ZipFile(path, "w", compression=kw.get("compression", zipfile.ZIP_DEFLATED)) as z:
            for name, data in members:
                z.writestr(name, data if data is not None else b"")
    return path


def zip_tree(prefix=""):
    members = []
    for name, data in TREE.items():
        info = zipfile.ZipInfo(prefix + name, date_time=(2024, 5, 1, 12, 0, 0))
        info.create_system = 3
        if data is None:
            info.external_attr = (stat.S_IFDIR | 0o4777) << 16 | 0x10
            members.append((info, b""))
        else:
            info.external_attr = (stat.S_IFREG | 0o6755) << 16  # setuid, setgid, executable
            info.compress_type = zipfile.ZIP_DEFLATED
            members.append((info, data))
    return members


def tar_info(name, kind=tarfile.REGTYPE, size=0, **kw):
    info = tarfile.TarInfo(name)
    info.type = kind
    info.size = size
    info.mode = kw.get("mode", 0o644)
    for k, v in kw.items():
        setattr(info, k, v)
    return info


def write_tar(path, members, mode="w:gz", **kw):
    """members: list of (TarInfo, data or None)."""
    with tarfile.open(path, mode, **kw) as t:
        for info, data in members:
            if data is not None:
                info.size = len(data)
                t.addfile(info, io.BytesIO(data))
            else:
                t.addfile(info)
    return path


def tar_tree(prefix="./"):
    members = [(tar_info(".", tarfile.DIRTYPE, mode=0o777), None)]
    for name, data in TREE.items():
        if data is None:
            members.append((tar_info(prefix + name.rstrip("/"), tarfile.DIRTYPE, mode=0o7777, uid=0, gid=0,
                                     uname="root", gname="root"), None))
        else:
            members.append((tar_info(prefix + name, mode=0o6755, uid=0, gid=0, uname="root", gname="root"), data))
    return members


def raw_zip(path, entries):
    """A zip written byte by byte, for what zipfile will not write. Each entry is a dict:
    name (bytes), data (bytes as stored), and optional method, crc, size, flags, attr, system."""
    body, central = bytearray(), bytearray()
    for e in entries:
        name, data = e["name"], e["data"]
        method, flags = e.get("method", 0), e.get("flags", 0)
        crc = e.get("crc", zlib.crc32(data))
        size = e.get("size", len(data))
        offset = len(body)
        body += struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, flags, method, 0, 0x21, crc, len(data), size,
                            len(name), 0) + name + data
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, (e.get("system", 3) << 8) | 20, 20, flags,
                               method, 0, 0x21, crc, len(data), size, len(name), 0, 0, 0, 0,
                               e.get("attr", (stat.S_IFREG | 0o644) << 16), offset) + name
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(entries), len(entries), len(central), len(body), 0)
    with open(path, "wb") as f:
        f.write(bytes(body + central + end))
    return path


def zipcrypto(data, password, check_byte):
    """Traditional PKWARE encryption: a 12-byte header, then the data."""
    def crc(value, byte):
        return zlib.crc32(bytes([byte]), value ^ 0xFFFFFFFF) ^ 0xFFFFFFFF
    keys = [0x12345678, 0x23456789, 0x34567890]

    def update(byte):
        keys[0] = crc(keys[0], byte)
        keys[1] = ((keys[1] + (keys[0] & 0xFF)) * 134775813 + 1) & 0xFFFFFFFF
        keys[2] = crc(keys[2], keys[1] >> 24)
    for b in password:
        update(b)
    out = bytearray()
    for b in bytes(11) + bytes([check_byte]) + data:
        t = (keys[2] | 2) & 0xFFFF
        out.append(b ^ (((t * (t ^ 1)) >> 8) & 0xFF))
        update(b)
    return bytes(out)


_zeros = {}


def deflated_zeros(n):
    """Raw deflate of n zero bytes and its CRC, made once."""
    if n not in _zeros:
        c = zlib.compressobj(9, zlib.DEFLATED, -15)
        block, parts, crc = bytes(MiB), [], 0
        for _ in range(n // MiB):
            parts.append(c.compress(block))
            crc = zlib.crc32(block, crc)
        parts.append(c.flush())
        _zeros[n] = (b"".join(parts), crc)
    return _zeros[n]


class Zeros(io.RawIOBase):
    def __init__(self, n):
        self.left = n

    def readable(self):
        return True

    def readinto(self, b):
        n = min(len(b), self.left)
        b[:n] = bytes(n)
        self.left -= n
        return n


# ---- the tests ----

class UnpackTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="unpack-test-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        os.mkdir(os.path.join(self.tmp, "out"))
        self.dest = os.path.join(self.tmp, "out", "dest")

    def path(self, name):
        return os.path.join(self.tmp, name)

    def unpack(self, archive, *options, dest=None, umask=0o022):
        started = time.monotonic()
        r = subprocess.run([sys.executable, SCRIPT, archive, dest or self.dest] + list(options),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60,
                           preexec_fn=lambda: os.umask(umask))
        self.elapsed = time.monotonic() - started
        return r.returncode, r.stdout.decode("utf-8", "replace"), r.stderr.decode("utf-8", "replace")

    def assertUnpacks(self, archive, *options, umask=0o022):
        rc, out, err = self.unpack(archive, *options, umask=umask)
        self.assertEqual((rc, out, err), (0, "", ""), "unpacking %s" % os.path.basename(archive))
        self.assertEqual(stat.S_IMODE(os.stat(self.dest).st_mode), 0o700)
        return self.read_tree(self.dest)

    def assertRefused(self, archive, fragment, *options, prefix="unpack: refused: "):
        rc, out, err = self.unpack(archive, *options)
        self.assertEqual(rc, 1, err)
        self.assertEqual(out, "")
        self.assertNotIn("Traceback", err)
        self.assertTrue(err.endswith("\n") and err.count("\n") == 1, "one line on stderr: %r" % err)
        self.assertTrue(err.startswith(prefix), err)
        self.assertIn(fragment, err)
        self.assertFalse(os.path.lexists(self.dest), "DEST is removed again")
        return err

    def assertDamaged(self, archive, *options):
        return self.assertRefused(archive, "", *options, prefix="unpack: the archive is damaged: ")

    def read_tree(self, root):
        """path -> bytes for files, None for folders; checks every mode and owner on the way."""
        found = {}
        for folder, dirs, files in os.walk(root):
            rel = os.path.relpath(folder, root)
            for d in dirs:
                p = os.path.join(folder, d)
                st = os.lstat(p)
                self.assertTrue(stat.S_ISDIR(st.st_mode), p)
                self.assertEqual(stat.S_IMODE(st.st_mode), 0o700, p)
                self.assertEqual(st.st_uid, os.getuid(), p)
                found[os.path.normpath(os.path.join(rel, d)) + "/"] = None
            for f in files:
                p = os.path.join(folder, f)
                st = os.lstat(p)
                self.assertTrue(stat.S_ISREG(st.st_mode), p)
                self.assertEqual(stat.S_IMODE(st.st_mode), 0o600, p)
                self.assertEqual(st.st_uid, os.getuid(), p)
                with open(p, "rb") as fh:
                    found[os.path.normpath(os.path.join(rel, f))] = fh.read()
        return found

    def expected(self, prefix=""):
        want = {prefix + k: v for k, v in TREE.items()}
        parts = set()
        for k in want:
            bits = k.rstrip("/").split("/")
            for i in range(1, len(bits)):
                parts.add("/".join(bits[:i]) + "/")
        for p in parts:
            want.setdefault(p, None)
        return want

    def good_zip(self, prefix=""):
        return write_zip(self.path("good.zip"), zip_tree(prefix))

    # -- honest archives --

    def test_good_zip(self):
        self.assertEqual(self.assertUnpacks(self.good_zip()), self.expected())

    def test_good_tar_gz_with_dot_prefix(self):
        archive = write_tar(self.path("good.tar.gz"), tar_tree())
        self.assertEqual(self.assertUnpacks(archive), self.expected())

    def test_good_plain_tar_named_anything(self):
        archive = write_tar(self.path("submission.dat"), tar_tree(""), mode="w")
        self.assertEqual(self.assertUnpacks(archive), self.expected())

    def test_modes_do_not_depend_on_the_umask(self):
        archive = write_tar(self.path("good.tar.gz"), tar_tree())
        self.assertEqual(self.assertUnpacks(archive, umask=0o277), self.expected())
        shutil.rmtree(self.dest)
        self.assertEqual(self.assertUnpacks(self.good_zip(), umask=0), self.expected())

    def test_zip_wrapping_the_tree_in_a_folder(self):
        self.assertEqual(self.assertUnpacks(self.good_zip("alice/")), self.expected("alice/"))

    def test_mac_metadata_is_skipped(self):
        members = zip_tree("alice/") + [
            ("__MACOSX/alice/chapters/00_naive/._kernel.cu", b"\0\5\x16\7 apple"),
            ("__MACOSX/alice/chapters/._00_naive", b"\0\5\x16\7"),
            ("alice/chapters/._README.md", b"\0\5\x16\7"),
            ("__MACOSX/alice/chapters/notes.txt", b"skipped too"),
            ("__MACOSX/alice/Icon\r", b""),
            ("alice/.DS_Store", b"kept"),
        ]
        found = self.assertUnpacks(write_zip(self.path("mac.zip"), members))
        want = self.expected("alice/")
        want["alice/.DS_Store"] = b"kept"
        self.assertEqual(found, want)

    def test_only_the_named_files_are_written(self):
        # A student's zip with a build folder: binaries over the limits and a link, none written.
        members = zip_tree("alice/") + [("alice/build/big.bin", b"0" * (5 << 20)),
                                         ("alice/chapters/00_naive/notes.md", b"mine")]
        archive = write_zip(self.path("build.zip"), members)
        self.assertRefused(archive, "larger than the limit")
        found = self.assertUnpacks(archive, "--only", "kernel.cu")
        self.assertEqual({k: v for k, v in found.items() if v is not None},
                         {k: v for k, v in self.expected("alice/").items()
                          if v is not None and k.endswith("/kernel.cu")})
        tar = tarfile.open(self.path("link.tar"), "w")
        link = tarfile.TarInfo("c/00_naive/kernel.cu")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
        tar.addfile(link)
        tar.close()
        shutil.rmtree(self.dest)
        self.assertRefused(self.path("link.tar"), "symbolic link", "--only", "kernel.cu")

    def test_case_only_differences_are_kept(self):
        found = self.assertUnpacks(write_zip(self.path("case.zip"), [("c/A.cu", b"1"), ("c/a.cu", b"2")]))
        self.assertEqual(found, {"c/": None, "c/A.cu": b"1", "c/a.cu": b"2"})

    def test_windows_backslash_separators(self):
        found = self.assertUnpacks(write_zip(self.path("win.zip"), [("chapters\\00_naive\\kernel.cu", b"k")]))
        self.assertEqual(found, {"chapters/": None, "chapters/00_naive/": None, "chapters/00_naive/kernel.cu": b"k"})

    def test_entry_limit_is_inclusive(self):
        members = [("c/%d.cu" % i, b"x") for i in range(5)]
        self.assertEqual(len(self.assertUnpacks(write_zip(self.path("five.zip"), members), "--max-files", "5")), 6)

    # -- paths that leave DEST --

    def test_absolute_path_zip(self):
        target = self.path("abs-zip.txt")
        self.assertRefused(write_zip(self.path("abs.zip"), [("c/ok.cu", b"ok"), (target, b"evil")]),
                           "member '%s' has an absolute path" % target)
        self.assertFalse(os.path.exists(target))

    def test_absolute_path_tar(self):
        target = self.path("abs-tar.txt")
        self.assertRefused(write_tar(self.path("abs.tar.gz"), [(tar_info(target), b"evil")]), "has an absolute path")
        self.assertFalse(os.path.exists(target))

    def test_dotdot_zip(self):
        err = self.assertRefused(write_zip(self.path("up.zip"), [("c/ok.cu", b"ok"), ("../../up-zip.txt", b"e")]),
                                 "member '../../up-zip.txt' leaves the archive's folder")
        self.assertEqual(err, "unpack: refused: member '../../up-zip.txt' leaves the archive's folder\n")
        self.assertFalse(os.path.exists(self.path("up-zip.txt")))

    def test_dotdot_tar(self):
        self.assertRefused(write_tar(self.path("up.tgz"), [(tar_info("chapters/../../../up-tar.txt"), b"e")]),
                           "leaves the archive's folder")
        self.assertFalse(os.path.exists(self.path("up-tar.txt")))

    def test_backslash_and_drive_tricks(self):
        self.assertRefused(write_zip(self.path("bs.zip"), [("..\\..\\up-bs.txt", b"e")]), "leaves the archive's folder")
        self.assertRefused(write_zip(self.path("drive.zip"), [("C:\\Windows\\x.txt", b"e")]), "drive letter")
        self.assertRefused(write_zip(self.path("unc.zip"), [("\\\\server\\share\\x", b"e")]), "absolute path")
        self.assertFalse(os.path.exists(self.path("up-bs.txt")))

    def test_control_characters_in_names(self):
        self.assertRefused(write_zip(self.path("esc.zip"), [("c/a\x1b[2Jb.cu", b"x")]),
                           "member 'c/a\\x1b[2Jb.cu' has a control character")
        self.assertRefused(write_tar(self.path("nl.tgz"), [(tar_info("c/a\nb.cu"), b"x")]), "control character")
        # zipfile cuts names at a NUL when reading; the script must look at the name as stored
        self.assertRefused(raw_zip(self.path("nul.zip"), [{"name": b"c/ok.cu\0../../x", "data": b"x"}]),
                           "control character")

    def test_name_not_utf8(self):
        info = tar_info("c/caf\udce9.cu")
        archive = write_tar(self.path("latin1.tgz"), [(info, b"x")], format=tarfile.GNU_FORMAT,
                            encoding="utf-8", errors="surrogateescape")
        self.assertRefused(archive, "not valid UTF-8")

    # -- links and special files --

    def test_symlink_tar(self):
        link = tar_info("chapters/passwd", tarfile.SYMTYPE, linkname="/etc/passwd")
        self.assertRefused(write_tar(self.path("sym.tgz"), [(link, None)]),
                           "member 'chapters/passwd' is a symbolic link (to '/etc/passwd')")

    def test_symlink_zip(self):
        info = zipfile.ZipInfo("chapters/passwd")
        info.create_system = 3
        info.external_attr = (stat.S_IFLNK | 0o777) << 16
        self.assertRefused(write_zip(self.path("sym.zip"), [("c/ok.cu", b"ok"), (info, b"/etc/passwd")]),
                           "member 'chapters/passwd' is a symbolic link")

    def test_hard_link_tar(self):
        link = tar_info("chapters/shadow", tarfile.LNKTYPE, linkname="/etc/shadow")
        self.assertRefused(write_tar(self.path("hard.tgz"), [(tar_info("c/ok.cu"), b"ok"), (link, None)]),
                           "member 'chapters/shadow' is a hard link")

    def test_file_written_through_a_symlink(self):
        outside = self.path("outside")
        os.mkdir(outside)
        members = [(tar_info("chapters/out", tarfile.SYMTYPE, linkname=outside), None),
                   (tar_info("chapters/out/evil.txt"), b"evil")]
        self.assertRefused(write_tar(self.path("through.tgz"), members), "symbolic link")
        self.assertEqual(os.listdir(outside), [])

    def test_devices_and_fifo_tar(self):
        for kind, words in ((tarfile.CHRTYPE, "character device"), (tarfile.BLKTYPE, "block device"),
                            (tarfile.FIFOTYPE, "FIFO")):
            info = tar_info("chapters/dev", kind, devmajor=1, devminor=3)
            self.assertRefused(write_tar(self.path("dev.tar"), [(info, None)], mode="w"), "is a " + words)

    def test_fifo_zip(self):
        info = zipfile.ZipInfo("chapters/pipe")
        info.external_attr = (stat.S_IFIFO | 0o600) << 16
        self.assertRefused(write_zip(self.path("fifo.zip"), [(info, b"")]), "is a FIFO")
        info = zipfile.ZipInfo("chapters/door")
        info.external_attr = stat.S_IFMT(0o170000) << 16  # no such file type
        self.assertRefused(write_zip(self.path("odd.zip"), [(info, b"")]), "is not a regular file or folder")

    # -- sizes and counts --

    def test_zip_bomb_stops_at_the_file_limit(self):
        data, crc = deflated_zeros(200 * MiB)
        archive = raw_zip(self.path("bomb.zip"), [{"name": b"chapters/bomb.bin", "data": data, "method": 8,
                                                   "crc": crc, "size": 200 * MiB}])
        with zipfile.ZipFile(archive) as z:
            self.assertEqual(z.infolist()[0].file_size, 200 * MiB)
        self.assertRefused(archive, "member 'chapters/bomb.bin' is larger than the limit of 4194304 bytes per file")
        self.assertLess(self.elapsed, 5)

    def test_zip_bomb_stops_at_the_total_limit(self):
        data, crc = deflated_zeros(200 * MiB)
        archive = raw_zip(self.path("bomb.zip"), [{"name": b"chapters/bomb.bin", "data": data, "method": 8,
                                                   "crc": crc, "size": 200 * MiB}])
        self.assertRefused(archive, "past the limit of 67108864 bytes in total", "--max-file-bytes", str(1 << 30))
        self.assertLess(self.elapsed, 5)

    def test_zip_bomb_that_lies_about_its_size(self):
        data, crc = deflated_zeros(200 * MiB)
        entries = [{"name": b"chapters/ok.cu", "data": b"ok"},
                   {"name": b"chapters/bomb.bin", "data": data, "method": 8, "crc": crc, "size": 1024}]
        self.assertDamaged(raw_zip(self.path("liar.zip"), entries))
        self.assertLess(self.elapsed, 5)

    def test_limits_are_checked_before_anything_is_read(self):
        data, crc = deflated_zeros(200 * MiB)
        entries = [{"name": b"chapters/bad-crc.cu", "data": b"ok", "crc": 1},
                   {"name": b"chapters/bomb.bin", "data": data, "method": 8, "crc": crc, "size": 200 * MiB}]
        self.assertRefused(raw_zip(self.path("late-bomb.zip"), entries), "'chapters/bomb.bin' is larger than")

    def test_tar_gz_bomb(self):
        archive = self.path("bomb.tgz")
        with tarfile.open(archive, "w:gz", compresslevel=1) as t:
            t.addfile(tar_info("chapters/bomb.bin", size=200 * MiB), io.BufferedReader(Zeros(200 * MiB)))
        self.assertRefused(archive, "larger than the limit", "--max-file-bytes", str(MiB))
        self.assertLess(self.elapsed, 5)

    def test_total_limit_over_many_files(self):
        members = [("c/%d.bin" % i, bytes(600 * 1024)) for i in range(4)]
        self.assertRefused(write_zip(self.path("many.zip"), members), "member 'c/3.bin' takes the archive past",
                           "--max-total-bytes", str(2 * MiB))

    def test_too_many_entries(self):
        self.assertRefused(write_zip(self.path("six.zip"), [("c/%d.cu" % i, b"x") for i in range(6)]),
                           "more than 5 entries (member 'c/5.cu'", "--max-files", "5")
        self.assertRefused(write_zip(self.path("lots.zip"), [("c/%d" % i, b"") for i in range(2001)]),
                           "more than 2000 entries")

    def test_duplicates_and_collisions(self):
        self.assertRefused(write_zip(self.path("dup.zip"), [("c/k.cu", b"1"), ("c/k.cu", b"2")]),
                           "member 'c/k.cu' appears twice")
        self.assertRefused(write_tar(self.path("dup.tgz"), [(tar_info("c/k.cu"), b"1"), (tar_info("./c//k.cu"), b"2")]),
                           "member './c//k.cu' appears twice")
        self.assertRefused(write_zip(self.path("under.zip"), [("c/k.cu", b"1"), ("c/k.cu/x", b"2")]), "collides")
        self.assertRefused(write_zip(self.path("over.zip"), [("c/k/x", b"1"), ("c/k", b"2")]), "collides")

    # -- damaged archives and other files --

    def test_truncated_tar_gz(self):
        good = write_tar(self.path("good.tgz"), tar_tree())
        with open(good, "rb") as f:
            data = f.read()
        for name, cut in (("half.tgz", data[:len(data) // 2]), ("no-trailer.tgz", data[:-6])):
            with open(self.path(name), "wb") as f:
                f.write(cut)
            self.assertDamaged(self.path(name))

    def test_truncated_plain_tar(self):
        good = write_tar(self.path("good.tar"), tar_tree(), mode="w")
        with open(good, "rb") as f:
            data = f.read()
        with open(self.path("half.tar"), "wb") as f:
            f.write(data[:len(data) // 2 + 100])
        self.assertDamaged(self.path("half.tar"))

    def test_truncated_and_corrupt_zip(self):
        with open(self.good_zip(), "rb") as f:
            data = f.read()
        with open(self.path("half.zip"), "wb") as f:
            f.write(data[:len(data) // 2])
        self.assertDamaged(self.path("half.zip"))
        # flip bytes inside the biggest member's deflated data: CRC or inflate error, after earlier files were written
        at = data.index(b"chapters/02_bank_conflicts/data.bin") + 1000
        with open(self.path("flipped.zip"), "wb") as f:
            f.write(data[:at] + bytes(b ^ 0x55 for b in data[at:at + 64]) + data[at + 64:])
        self.assertIn("data.bin", self.assertDamaged(self.path("flipped.zip")))

    def test_neither_zip_nor_tar(self):
        rnd = self.path("random.bin")
        with open(rnd, "wb") as f:
            f.write(random.Random(3).getrandbits(8 * 4096).to_bytes(4096, "little"))
        self.assertRefused(rnd, "'random.bin' is neither a zip nor a tar archive")
        text = self.path("homework.zip")
        with open(text, "w") as f:
            f.write("my kernels are in the email\n" * 50)
        self.assertRefused(text, "'homework.zip' is neither a zip nor a tar archive")
        empty = self.path("empty.tar.gz")
        open(empty, "wb").close()
        self.assertRefused(empty, "neither a zip nor a tar archive")
        import gzip
        gz = self.path("kernel.cu.gz")
        with gzip.open(gz, "wb") as f:
            f.write(b"__global__ void k() {}\n" * 100)
        self.assertDamaged(gz)

    def test_encrypted_zip(self):
        plain = b"__global__ void secret() {}\n"
        crc = zlib.crc32(plain)
        entry = {"name": b"chapters/00_naive/kernel.cu", "data": zipcrypto(plain, b"pw", crc >> 24),
                 "crc": crc, "size": len(plain), "flags": 0x1}
        archive = raw_zip(self.path("locked.zip"), [entry])
        with zipfile.ZipFile(archive) as z:  # the archive itself is sound: it opens with its password
            self.assertEqual(z.read("chapters/00_naive/kernel.cu", pwd=b"pw"), plain)
        self.assertRefused(archive, "member 'chapters/00_naive/kernel.cu' is encrypted")

    # -- usage --

    def test_dest_exists(self):
        os.mkdir(self.dest)
        with open(os.path.join(self.dest, "keep"), "w") as f:
            f.write("keep")
        rc, out, err = self.unpack(self.good_zip())
        self.assertEqual(rc, 2, err)
        self.assertTrue(err.startswith("unpack: ") and "already exists" in err, err)
        self.assertEqual(os.listdir(self.dest), ["keep"])
        link = self.path("out/dangling")
        os.symlink(self.path("nowhere"), link)
        self.assertEqual(self.unpack(self.good_zip(), dest=link)[0], 2)
        self.assertFalse(os.path.exists(self.path("nowhere")))

    def test_usage_errors(self):
        archive = self.good_zip()
        for argv in ([], [archive], [archive, self.dest, "--max-files", "0"],
                     [archive, self.dest, "--max-file-bytes", "lots"], [archive, self.dest, "--bogus"],
                     [self.path("missing.zip"), self.dest], [self.tmp, self.dest]):
            r = subprocess.run([sys.executable, SCRIPT] + argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            self.assertEqual(r.returncode, 2, (argv, r.stderr))
            self.assertTrue(r.stderr.startswith(b"unpack: "), r.stderr)
            self.assertFalse(os.path.lexists(self.dest))


if __name__ == "__main__":
    if len(sys.argv) < 2 or not os.path.isfile(sys.argv[1]):
        sys.exit("usage: unpack_test.py path/to/grader/unpack.py [unittest options]")
    SCRIPT = os.path.abspath(sys.argv.pop(1))
    unittest.main()
