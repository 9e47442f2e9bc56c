#!/usr/bin/python3
"""A FUSE file system that keeps everything in memory and, at unmount (the "power cut"), writes to
BACKING only what was made durable: a file's data as of its last fsync/fdatasync, a directory's
entries (create, mkdir, rename, unlink) as of its last fsync. Usage: cutfs.py MOUNT BACKING.

The model, per inode: writes and truncates are lost unless the file is synced later; a directory
entry exists after the cut only if its parent directory was synced after the entry was made (so a
synced file whose name was never synced is lost, and an unlinked file whose removal was never synced
comes back with its synced data). Not modelled: partial or torn writes, reordering within a sync,
xattrs, links, mtimes. Prints stats as one JSON line on stdout at exit.
"""
import errno
import json
import os
import stat
import sys
import time

from fusepy import FUSE, FuseOSError, Operations


class Node:
    def __init__(self, is_dir, mode):
        self.is_dir = is_dir
        self.mode = mode
        self.mtime = time.time()
        # Files: live bytes, bytes as last synced (None: never synced), ranges written since.
        self.data = bytearray()
        self.durable = None
        self.dirty = []
        # Directories: live entries and entries as last synced.
        self.entries = {}
        self.durable_entries = {}


class CutFS(Operations):
    def __init__(self):
        self.root = Node(True, 0o755)
        self.handles = {}
        self.next_fh = 1
        self.stats = {'fsync': 0, 'fsyncdir': 0, 'bytesWritten': 0, 'bytesSynced': 0}

    def init(self, path):
        print(json.dumps({'mounted': True}), flush=True)

    def _lookup(self, path):
        node = self.root
        for part in [p for p in path.split('/') if p]:
            if not node.is_dir or part not in node.entries:
                raise FuseOSError(errno.ENOENT)
            node = node.entries[part]
        return node

    def _parent(self, path):
        head, name = os.path.split(path.rstrip('/'))
        parent = self._lookup(head)
        if not parent.is_dir:
            raise FuseOSError(errno.ENOTDIR)
        return parent, name

    def _node(self, path, fh):
        return self.handles[fh] if fh else self._lookup(path)

    def _handle(self, node):
        fh = self.next_fh
        self.next_fh += 1
        self.handles[fh] = node
        return fh

    def getattr(self, path, fh=None):
        node = self._node(path, fh)
        kind = stat.S_IFDIR if node.is_dir else stat.S_IFREG
        size = 4096 if node.is_dir else len(node.data)
        return {'st_mode': kind | node.mode, 'st_nlink': 2 if node.is_dir else 1, 'st_size': size,
                'st_uid': os.getuid(), 'st_gid': os.getgid(), 'st_blocks': (size + 511) // 512,
                'st_atime': node.mtime, 'st_mtime': node.mtime, 'st_ctime': node.mtime}

    def readdir(self, path, fh):
        return ['.', '..', *self._lookup(path).entries]

    def mkdir(self, path, mode):
        parent, name = self._parent(path)
        if name in parent.entries:
            raise FuseOSError(errno.EEXIST)
        parent.entries[name] = Node(True, mode & 0o7777)

    def rmdir(self, path):
        parent, name = self._parent(path)
        if self._lookup(path).entries:
            raise FuseOSError(errno.ENOTEMPTY)
        del parent.entries[name]

    def unlink(self, path):
        parent, name = self._parent(path)
        self._lookup(path)
        del parent.entries[name]

    def rename(self, old, new):
        old_parent, old_name = self._parent(old)
        new_parent, new_name = self._parent(new)
        node = self._lookup(old)
        del old_parent.entries[old_name]
        new_parent.entries[new_name] = node

    def create(self, path, mode, fi=None):
        parent, name = self._parent(path)
        node = parent.entries.get(name)
        if node is None:
            node = parent.entries[name] = Node(False, mode & 0o7777)
        return self._handle(node)

    def open(self, path, flags):
        return self._handle(self._lookup(path))

    # Not overridden, as fusepy's defaults do: flush (close(2) syncs nothing), utimens, opendir (fh 0: by path).
    def release(self, path, fh):
        self.handles.pop(fh, None)
        return 0

    def read(self, path, size, offset, fh):
        return bytes(self._node(path, fh).data[offset:offset + size])

    def write(self, path, data, offset, fh):
        node = self._node(path, fh)
        if offset > len(node.data):
            node.data.extend(bytes(offset - len(node.data)))
        node.data[offset:offset + len(data)] = data
        node.dirty.append((offset, offset + len(data)))
        node.mtime = time.time()
        self.stats['bytesWritten'] += len(data)
        return len(data)

    def truncate(self, path, length, fh=None):
        node = self._node(path, fh)
        if length < len(node.data):
            del node.data[length:]
        else:
            node.data.extend(bytes(length - len(node.data)))
        node.dirty.append((0, 0))  # the length alone changed: the next sync records it

    def fsync(self, path, datasync, fh):
        node = self._node(path, fh)
        self.stats['fsync'] += 1
        if node.durable is None:
            node.durable = bytearray()
        # Only the ranges written since the last sync are copied: a WAL is synced thousands of times.
        if len(node.durable) > len(node.data):
            del node.durable[len(node.data):]
        else:
            node.durable.extend(bytes(len(node.data) - len(node.durable)))
        for start, end in node.dirty:
            end = min(end, len(node.data))
            node.durable[start:end] = node.data[start:end]
            self.stats['bytesSynced'] += max(0, end - start)
        node.dirty = []
        return 0

    def fsyncdir(self, path, datasync, fh):
        node = self._node(path, fh)
        self.stats['fsyncdir'] += 1
        node.durable_entries = dict(node.entries)
        return 0

    def chmod(self, path, mode):
        self._lookup(path).mode = mode & 0o7777

    def statfs(self, path):
        return {'f_bsize': 4096, 'f_frsize': 4096, 'f_blocks': 1 << 24, 'f_bfree': 1 << 23,
                'f_bavail': 1 << 23, 'f_files': 1 << 20, 'f_ffree': 1 << 19, 'f_namemax': 255}


def write_durable(node, dir_path, counts):
    """The state after the power comes back: durable entries only, each file with its synced bytes."""
    for name, child in node.durable_entries.items():
        target = os.path.join(dir_path, name)
        if child.is_dir:
            os.makedirs(target, exist_ok=True)
            write_durable(child, target, counts)
        else:
            with open(target, 'wb') as f:
                f.write(child.durable or b'')
            counts['files'] += 1
            counts['bytesKept'] += len(child.durable or b'')
            counts['bytesDropped'] += len(child.data) - len(child.durable or b'')
    counts['entriesDropped'] += len(set(node.entries) - set(node.durable_entries))


if __name__ == '__main__':
    mount, backing = sys.argv[1], sys.argv[2]
    fs = CutFS()
    # hard_remove: an unlinked open file is gone at once (no .fuse_hidden rename); big_writes: 128 KiB writes.
    FUSE(fs, mount, foreground=True, nothreads=True, hard_remove=True, big_writes=True)
    counts = {'files': 0, 'bytesKept': 0, 'bytesDropped': 0, 'entriesDropped': 0}
    os.makedirs(backing, exist_ok=True)
    write_durable(fs.root, backing, counts)
    print(json.dumps({**fs.stats, **counts}), flush=True)
