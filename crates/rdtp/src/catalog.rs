//! [`DirCatalog`]: a catalogue over the regular files of a directory, kept up to date while
//! it is served.
//!
//! # Indexing
//!
//! The directory is walked recursively. Each regular file becomes one object named by its
//! path relative to the directory (components joined with `/`), identified by the BLAKE3
//! hash of its bytes, with its hash tree for verified streaming (`rdtp_proto::tree`): one
//! streaming pass, 1 MiB at a time, never loaded whole. The file stays open and is read
//! with `pread`, so the catalogue holds one file descriptor per object and no content.
//!
//! Skipped (with a warning on stderr, once): non-regular files, symlinks that point
//! outside the directory or to directories (no loops), names that are not UTF-8 or are
//! longer than a resolve request can carry.
//!
//! # Files that change (issue 11)
//!
//! An object's EID is the hash of the bytes its file had when hashed; bytes the file has
//! after a change must never go out under it.
//!
//! - **Reads are checked.** Bytes are read 64 KiB at a time, and after each read the open
//!   file's `fstat` (size, mtime, ctime, inode, device) must still be what it was when the
//!   file was hashed. Otherwise the object is dropped at once: requests for its EID get
//!   `UnknownContent` ([`ReadError::Gone`]), never the new bytes. A `write` updates mtime
//!   and ctime before it changes any byte, so bytes read before an unchanged `fstat` are
//!   the hashed ones. ctime, which no program can set, catches rewrites that restore the
//!   mtime (`cp -p`, `touch -r`). The checked windows are kept (four), so consecutive units
//!   cost one `pread` and one `fstat` per 64 KiB.
//! - **Files are hashed once they have settled.** File times are coarse (the kernel's
//!   clock tick, ≤ 10 ms; whole seconds on some file systems), so a change in the same tick
//!   as the file's previous one would leave `stat` unchanged — git's "racy clean" problem.
//!   A file is therefore hashed only once its last change is [`DirOptions::settle`] (50 ms)
//!   old, or [`DirOptions::settle_coarse`] (2 s) where its timestamps are whole seconds:
//!   any later write then gets other times. Hashing a file just written waits that long
//!   (once for all the files written together).
//! - **Names are checked.** Resolving a name `stat`s its path: a file replaced (another
//!   inode), changed or deleted since it was hashed is dropped there and then, and a name
//!   being hashed is answered `Busy` — the receiver asks again — rather than with the old
//!   EID or "not found".
//! - **The directory is rescanned** in the background ([`DirCatalog::watch`]; `rdtp serve
//!   --rescan SECS`, default 1 s): new files are hashed and appear, deleted ones disappear,
//!   changed ones are hashed again and served under their new EID. The scan and the hashing
//!   run on their own thread at low priority (nice 10), 1 MiB at a time; each serving
//!   thread only swaps in the new catalogue between datagrams ([`Served::refresh`]: one
//!   atomic load per receive batch), and the old one is freed on the scanner's thread. A
//!   change seen by a read or a resolve wakes the scanner at once.
//!
//! # Several serving threads
//!
//! A server with several workers gives each a [`DirView`] ([`DirCatalog::view`]): the
//! catalogue as of its own last refresh and its own checked read windows, so the threads
//! share no lock on the way from a file to a datagram.
//!
//! Why `stat` polling rather than inotify: the read check is needed whatever notices
//! changes (a notification arrives after the bytes changed), and on top of it inotify needs
//! a watch per directory, counts against a per-user limit shared with every other program
//! (128 instances by default), overflows under bursts (a full rescan then anyway) and misses
//! changes made from other hosts (NFS). A scan costs one `stat` per file, and the interval
//! stretches to ten times the walk's duration, so a huge directory costs at most about a
//! tenth of a core.

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs::{self, File};
use std::io::{self, Read};
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

use rdtp_proto::Eid;
use rdtp_proto::server::{Catalog, ReadError};
use rdtp_proto::tree::{Outboard, OutboardBuilder};
use rdtp_proto::wire::{ListEntry, RESOLVE_MAX_NAME};

use crate::error::{Error, Result};
use crate::server::{Parallel, Served};
use crate::signals;

/// How chatty a [`DirCatalog`] is on stderr.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IndexProgress {
    /// Print nothing.
    Quiet,
    /// Print warnings about skipped entries, progress when indexing takes long, and each
    /// object added, changed or removed after the first scan.
    Stderr,
}

/// Settings of a [`DirCatalog`].
#[derive(Clone, Copy, Debug)]
pub struct DirOptions {
    /// What to print.
    pub progress: IndexProgress,
    /// How old a file's last change must be before it is hashed, where its timestamps have
    /// nanoseconds: more than the kernel's clock tick (see the module docs).
    pub settle: Duration,
    /// The same where its timestamps are whole seconds (FAT's are 2 s apart).
    pub settle_coarse: Duration,
}

impl Default for DirOptions {
    fn default() -> Self {
        DirOptions {
            progress: IndexProgress::Quiet,
            settle: Duration::from_millis(50),
            settle_coarse: Duration::from_secs(2),
        }
    }
}

/// Most bytes read (and checked) at once.
const WINDOW: usize = 64 * 1024;
/// Reads start and end on multiples of this (a BLAKE3 block): neighbouring receivers'
/// requests share what one of them read.
const GRAIN: u64 = 16 * 1024;
/// Checked windows kept per serving thread (2 MiB), the least recently used replaced.
const WINDOWS: usize = 32;
/// Hashing reads this much at a time.
const HASH_BUF: usize = 1 << 20;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn now_ns() -> i128 {
    SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as i128)
}

/// What `stat` says of a file: while all of it stays the same, so do its bytes (once the
/// file has settled: see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Stamp {
    dev: u64,
    ino: u64,
    size: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl Stamp {
    fn of(m: &fs::Metadata) -> Stamp {
        Stamp {
            dev: m.dev(),
            ino: m.ino(),
            size: m.len(),
            mtime: (m.mtime(), m.mtime_nsec()),
            ctime: (m.ctime(), m.ctime_nsec()),
        }
    }

    /// The later of its two change times, in nanoseconds since the epoch.
    fn changed_ns(&self) -> i128 {
        let ns = |(s, n): (i64, i64)| i128::from(s) * 1_000_000_000 + i128::from(n);
        ns(self.mtime).max(ns(self.ctime))
    }
}

/// One served file.
struct FileEntry {
    name: String,
    path: PathBuf,
    file: File,
    stamp: Stamp,
    outboard: Outboard,
    /// A change was seen: no longer served; the next scan hashes the file again.
    stale: AtomicBool,
}

impl FileEntry {
    fn eid(&self) -> Eid {
        self.outboard.root()
    }
    fn size(&self) -> u64 {
        self.outboard.size()
    }
    fn live(&self) -> bool {
        !self.stale.load(Ordering::Acquire)
    }
    /// Whether the open file is still what was hashed.
    fn unchanged(&self) -> bool {
        self.file.metadata().is_ok_and(|m| Stamp::of(&m) == self.stamp)
    }
    /// Whether the path still names what was hashed (not replaced, changed or deleted).
    fn path_unchanged(&self) -> bool {
        fs::metadata(&self.path).is_ok_and(|m| Stamp::of(&m) == self.stamp)
    }

    /// Fill `buf` with the bytes at `start`, checked (see the module docs): `Gone` if the
    /// file changed.
    fn read_checked(&self, start: u64, buf: &mut [u8]) -> std::result::Result<(), ReadError> {
        if let Err(e) = self.file.read_exact_at(buf, start) {
            // A file cut short reads short: a change, not an I/O failure.
            return Err(if self.unchanged() {
                ReadError::Failed(format!("{}: {e}", self.path.display()))
            } else {
                ReadError::Gone
            });
        }
        // After the read: a write that began before it has changed the times by now.
        if !self.unchanged() {
            return Err(ReadError::Gone);
        }
        Ok(())
    }
}

/// Checked bytes of served files, 64 KiB each. Each [`DirView`] (each serving thread) has
/// its own, so no lock is taken on the way from a file to a datagram.
struct Window {
    entry: Option<Arc<FileEntry>>,
    start: u64,
    len: usize,
    buf: Box<[u8]>,
    /// When it was last used (the windows' clock), for replacement.
    used: u64,
}

impl Window {
    fn of(&self, e: &Arc<FileEntry>) -> bool {
        self.entry.as_ref().is_some_and(|x| Arc::ptr_eq(x, e))
    }
}

struct Windows {
    slots: Vec<Window>,
    clock: u64,
}

impl Windows {
    fn new() -> Windows {
        let slots = (0..WINDOWS)
            .map(|_| Window { entry: None, start: 0, len: 0, buf: vec![0u8; WINDOW].into_boxed_slice(), used: 0 })
            .collect();
        Windows { slots, clock: 0 }
    }

    /// Fill `out` with the bytes of `e` at `offset`, through the windows; bytes up to
    /// `until` are about to be read too (see [`Windows::slot`]).
    fn read(
        &mut self,
        e: &Arc<FileEntry>,
        offset: u64,
        out: &mut [u8],
        until: Option<u64>,
    ) -> std::result::Result<(), ReadError> {
        let mut done = 0usize;
        while done < out.len() {
            let pos = offset + done as u64;
            let i = self.slot(e, pos, until)?;
            let win = &self.slots[i];
            let from = (pos - win.start) as usize;
            let n = (win.len - from).min(out.len() - done);
            out[done..done + n].copy_from_slice(&win.buf[from..from + n]);
            done += n;
        }
        Ok(())
    }

    /// The slot holding byte `pos` of `e`, reading (and checking) it if none does. The read
    /// starts at the 16 KiB boundary below `pos` and ends at the one above `until` (the end
    /// of the request's range, when the server announced it), at most 64 KiB on: a one-unit
    /// request reads 16 KiB, not 64 (issue 12, `examples/request_cost.rs`), and receivers
    /// near each other in the file share it. Without an announced range, or when the read
    /// continues a window still held (a receiver streaming through the file), it reads
    /// 64 KiB.
    fn slot(&mut self, e: &Arc<FileEntry>, pos: u64, until: Option<u64>) -> std::result::Result<usize, ReadError> {
        self.clock += 1;
        if let Some(i) = self.slots.iter().position(|w| w.of(e) && pos >= w.start && pos - w.start < w.len as u64) {
            self.slots[i].used = self.clock;
            return Ok(i);
        }
        let streaming = self.slots.iter().any(|w| w.of(e) && w.start + w.len as u64 == pos);
        let start = pos - pos % GRAIN;
        let end = match until {
            Some(end) if end > pos && !streaming => end.div_ceil(GRAIN).saturating_mul(GRAIN),
            _ => u64::MAX,
        };
        let len = (end.min(e.size()).min(start + WINDOW as u64) - start) as usize;
        let i = (0..self.slots.len()).min_by_key(|&i| self.slots[i].used).unwrap_or(0);
        let w = &mut self.slots[i];
        w.entry = None; // until filled
        e.read_checked(start, &mut w.buf[..len])?;
        w.entry = Some(e.clone());
        w.start = start;
        w.len = len;
        w.used = self.clock;
        Ok(i)
    }
}

/// Shared by the catalogues a [`DirCatalog`] serves over time and its scanner.
struct Shared {
    /// Names being hashed (new, changed or changing files).
    pending: Mutex<HashSet<String>>,
    /// Whether a scan is wanted now (a change was seen, or the scanner must stop).
    wake: Mutex<bool>,
    cond: Condvar,
    stop: AtomicBool,
}

impl Shared {
    fn nudge(&self) {
        *lock(&self.wake) = true;
        self.cond.notify_all();
    }
}

/// The objects of a [`DirCatalog`] at one moment: what its server answers from between two
/// refreshes.
pub struct DirSnapshot {
    entries: Vec<Arc<FileEntry>>,
    by_name: HashMap<String, usize>,
    by_eid: HashMap<Eid, Vec<usize>>,
    shared: Arc<Shared>,
}

impl std::fmt::Debug for DirSnapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DirSnapshot").field("objects", &self.entries.len()).finish_non_exhaustive()
    }
}

impl DirSnapshot {
    /// From entries sorted by name.
    fn build(entries: Vec<Arc<FileEntry>>, shared: Arc<Shared>) -> DirSnapshot {
        let mut by_name = HashMap::with_capacity(entries.len());
        let mut by_eid: HashMap<Eid, Vec<usize>> = HashMap::with_capacity(entries.len());
        for (i, e) in entries.iter().enumerate() {
            by_name.insert(e.name.clone(), i);
            by_eid.entry(e.eid()).or_default().push(i);
        }
        DirSnapshot { entries, by_name, by_eid, shared }
    }

    /// Sum of the objects' sizes.
    pub fn total_size(&self) -> u64 {
        self.entries.iter().map(|e| e.size()).sum()
    }

    /// The served entry with this EID (the first, by name, of files with equal content).
    fn live(&self, eid: &Eid) -> Option<&Arc<FileEntry>> {
        self.by_eid.get(eid)?.iter().map(|&i| &self.entries[i]).find(|e| e.live())
    }

    /// Read `buf` at `offset` of `eid` with `read`, after the range checks; a change seen
    /// drops the object.
    fn read_with(
        &self,
        eid: &Eid,
        offset: u64,
        buf: &mut [u8],
        read: impl FnOnce(&Arc<FileEntry>, u64, &mut [u8]) -> std::result::Result<(), ReadError>,
    ) -> std::result::Result<(), ReadError> {
        let e = self.live(eid).ok_or(ReadError::Gone)?;
        if offset.checked_add(buf.len() as u64).is_none_or(|end| end > e.size()) {
            return Err(ReadError::Failed("range outside object".into()));
        }
        let r = read(e, offset, buf);
        if r == Err(ReadError::Gone) {
            self.drop_entry(e);
        }
        r
    }

    /// Stop serving `e` (its file changed) and wake the scanner.
    fn drop_entry(&self, e: &FileEntry) {
        if !e.stale.swap(true, Ordering::AcqRel) {
            self.shared.nudge();
        }
    }
}

impl Catalog for DirSnapshot {
    fn size_of(&self, eid: &Eid) -> Option<u64> {
        self.live(eid).map(|e| e.size())
    }

    /// Reads straight from the file, checked, without windows: what a [`DirView`] reads
    /// through its windows, for callers that read once (a server reads through a view).
    fn read_at(&self, eid: &Eid, offset: u64, buf: &mut [u8]) -> std::result::Result<(), ReadError> {
        self.read_with(eid, offset, buf, |e, offset, buf| e.read_checked(offset, buf))
    }

    fn resolve(&self, name: &str) -> Option<(Eid, u64)> {
        let e = &self.entries[*self.by_name.get(name)?];
        if !e.live() {
            return None;
        }
        if !e.path_unchanged() {
            self.drop_entry(e);
            return None;
        }
        Some((e.eid(), e.size()))
    }

    fn is_pending(&self, name: &str) -> bool {
        if lock(&self.shared.pending).contains(name) {
            return true;
        }
        // Dropped a moment ago and still there: the scanner is about to hash it again.
        self.by_name.get(name).is_some_and(|&i| {
            let e = &self.entries[i];
            !e.live() && fs::metadata(&e.path).is_ok_and(|m| m.is_file())
        })
    }

    fn name_of(&self, eid: &Eid) -> Option<&str> {
        self.live(eid).map(|e| e.name.as_str())
    }

    fn len(&self) -> usize {
        self.entries.len()
    }

    fn entry(&self, index: usize) -> Option<ListEntry<'_>> {
        self.entries.get(index).map(|e| ListEntry { eid: e.eid(), size: e.size(), name: e.name.as_str() })
    }

    fn outboard(&self, eid: &Eid) -> Option<&Outboard> {
        self.live(eid).map(|e| &e.outboard)
    }
}

/// Catalogues the scanner built, handed to the serving threads.
struct Mailbox {
    latest: Mutex<Arc<DirSnapshot>>,
    /// Bumped with every catalogue published: a view whose own count differs takes
    /// `latest` (one atomic load per refresh otherwise).
    generation: AtomicU64,
    /// Catalogues no view uses any more, freed by the scanner (not a serving thread).
    retired: Mutex<Vec<Arc<DirSnapshot>>>,
}

impl Mailbox {
    fn publish(&self, snapshot: DirSnapshot) {
        *lock(&self.latest) = Arc::new(snapshot);
        self.generation.fetch_add(1, Ordering::AcqRel);
    }
}

/// One serving thread's handle on a [`DirCatalog`]'s objects ([`DirCatalog::view`]): the
/// catalogue as of its last [`Served::refresh`], and its own read windows, so serving
/// threads share no lock. Not `Sync`: one thread serves from it.
pub struct DirView {
    current: Arc<DirSnapshot>,
    seen: u64,
    mailbox: Arc<Mailbox>,
    windows: RefCell<Windows>,
    /// The range the server said it is about to read ([`Catalog::will_read`]).
    reading: Cell<Option<(Eid, u64, u64)>>,
}

impl std::fmt::Debug for DirView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DirView").field("objects", &self.current.entries.len()).finish_non_exhaustive()
    }
}

impl DirView {
    fn new(mailbox: Arc<Mailbox>) -> DirView {
        let seen = mailbox.generation.load(Ordering::Acquire);
        let current = lock(&mailbox.latest).clone();
        DirView { current, seen, mailbox, windows: RefCell::new(Windows::new()), reading: Cell::new(None) }
    }

    /// Sum of the objects' sizes.
    pub fn total_size(&self) -> u64 {
        self.current.total_size()
    }
}

impl Served for DirView {
    type Catalog = DirView;

    fn catalog(&self) -> &DirView {
        self
    }

    fn refresh(&mut self) {
        let generation = self.mailbox.generation.load(Ordering::Acquire);
        if generation == self.seen {
            return;
        }
        self.seen = generation;
        let new = lock(&self.mailbox.latest).clone();
        let old = std::mem::replace(&mut self.current, new);
        lock(&self.mailbox.retired).push(old);
    }
}

impl Parallel for DirView {
    type Worker = DirView;
    fn worker(&self) -> DirView {
        DirView::new(self.mailbox.clone())
    }
}

impl Catalog for DirView {
    fn size_of(&self, eid: &Eid) -> Option<u64> {
        self.current.size_of(eid)
    }
    fn read_at(&self, eid: &Eid, offset: u64, buf: &mut [u8]) -> std::result::Result<(), ReadError> {
        let until = match self.reading.get() {
            Some((e, start, end)) if e == *eid && (start..end).contains(&offset) => Some(end),
            _ => None,
        };
        let mut windows = self.windows.borrow_mut();
        self.current.read_with(eid, offset, buf, |e, offset, buf| windows.read(e, offset, buf, until))
    }
    fn will_read(&self, eid: &Eid, offset: u64, len: u64) {
        self.reading.set(Some((*eid, offset, offset.saturating_add(len))));
    }
    fn resolve(&self, name: &str) -> Option<(Eid, u64)> {
        self.current.resolve(name)
    }
    fn is_pending(&self, name: &str) -> bool {
        self.current.is_pending(name)
    }
    fn name_of(&self, eid: &Eid) -> Option<&str> {
        self.current.name_of(eid)
    }
    fn len(&self) -> usize {
        self.current.len()
    }
    fn entry(&self, index: usize) -> Option<ListEntry<'_>> {
        self.current.entry(index)
    }
    fn outboard(&self, eid: &Eid) -> Option<&Outboard> {
        self.current.outboard(eid)
    }
}

/// A file found by a walk.
struct Found {
    name: String,
    path: PathBuf,
    stamp: Stamp,
}

/// Walks the directory, hashes what is new or changed, and builds catalogues.
struct Indexer {
    root: PathBuf,
    options: DirOptions,
    /// What is served, by name.
    known: BTreeMap<String, Arc<FileEntry>>,
    shared: Arc<Shared>,
    buf: Vec<u8>,
    /// Paths already warned about (each warning is printed once).
    warned: HashSet<PathBuf>,
    /// Whether the first scan is done (later ones report what changed).
    first_done: bool,
}

/// The outcome of hashing one file.
enum Hashed {
    Entry(FileEntry),
    /// It changed while being hashed (or the scanner is stopping): try again later.
    Changing,
}

impl Indexer {
    fn warn(&mut self, path: &Path, msg: String) {
        if self.options.progress == IndexProgress::Stderr && self.warned.insert(path.to_path_buf()) {
            eprintln!("rdtp: warning: {msg}");
        }
    }

    fn note(&self, msg: String) {
        if self.options.progress == IndexProgress::Stderr && self.first_done {
            eprintln!("rdtp: {msg}");
        }
    }

    fn snapshot(&self) -> DirSnapshot {
        DirSnapshot::build(self.known.values().cloned().collect(), self.shared.clone())
    }

    /// Walk the directory; hash what is new, changed or dropped; forget
    /// what is gone. `publish` gets a new catalogue whenever something changed (at the end,
    /// and every second during long hashing). Returns how long the walk took.
    fn scan(&mut self, publish: &mut dyn FnMut(DirSnapshot)) -> Result<Duration> {
        let walk_started = Instant::now();
        let mut found = Vec::new();
        let mut warnings = Vec::new();
        let root = self.root.clone();
        walk(&root, &root, &mut found, &mut |p, m| warnings.push((p, m)))?;
        for (p, m) in warnings {
            self.warn(&p, m);
        }
        let walk_time = walk_started.elapsed();

        let mut changed = false;
        let names: HashSet<&str> = found.iter().map(|f| f.name.as_str()).collect();
        let gone: Vec<String> = self.known.keys().filter(|n| !names.contains(n.as_str())).cloned().collect();
        for name in gone {
            if let Some(e) = self.known.remove(&name) {
                e.stale.store(true, Ordering::Release);
                self.note(format!("{name}: removed"));
                changed = true;
            }
        }
        let todo: Vec<Found> = found
            .into_iter()
            .filter(|f| self.known.get(&f.name).is_none_or(|e| !e.live() || e.stamp != f.stamp))
            .collect();
        *lock(&self.shared.pending) = todo.iter().map(|f| f.name.clone()).collect();
        raise_nofile_limit((self.known.len() + todo.len()) as u64 + 64);

        let total: u64 = todo.iter().map(|f| f.stamp.size).sum();
        let show = self.options.progress == IndexProgress::Stderr;
        let root = self.root.display().to_string();
        let (mut last_report, mut last_publish) = (Instant::now(), Instant::now());
        let mut hashed = 0u64;
        let mut progress = |n: u64| {
            hashed += n;
            if show && last_report.elapsed() >= Duration::from_secs(1) {
                last_report = Instant::now();
                eprintln!("rdtp: indexing {root}: {:.1}/{:.1} MB hashed", hashed as f64 / 1e6, total as f64 / 1e6);
            }
        };
        for f in todo {
            if self.shared.stop.load(Ordering::Acquire) {
                break;
            }
            let outcome = self.hash(&f, &mut progress);
            match outcome {
                Ok(Hashed::Entry(entry)) => {
                    let (eid, size) = (entry.eid(), entry.size());
                    let old = self.known.insert(f.name.clone(), Arc::new(entry));
                    match old.map(|o| o.eid()) {
                        None => self.note(format!("{}: added ({size} bytes, EID {eid})", f.name)),
                        Some(o) if o != eid => {
                            self.note(format!("{}: changed ({size} bytes, EID {o} → {eid})", f.name))
                        }
                        Some(_) => {}
                    }
                    lock(&self.shared.pending).remove(&f.name);
                    changed = true;
                }
                Ok(Hashed::Changing) => {
                    // Not served until it holds still; asked-for names get Busy meanwhile.
                    if let Some(old) = self.known.remove(&f.name) {
                        old.stale.store(true, Ordering::Release);
                        changed = true;
                    }
                }
                Err(e) if !self.first_done && matches!(e.raw_os_error(), Some(libc::EMFILE | libc::ENFILE)) => {
                    return Err(Error::io(
                        format!("too many files to keep open ({} entries; raise `ulimit -n`)", self.known.len() + 1),
                        e,
                    ));
                }
                Err(e) => {
                    self.warn(&f.path, format!("skipping {}: {e}", f.path.display()));
                    lock(&self.shared.pending).remove(&f.name);
                    if let Some(old) = self.known.remove(&f.name) {
                        old.stale.store(true, Ordering::Release);
                        changed = true;
                    }
                }
            }
            if changed && self.first_done && last_publish.elapsed() >= Duration::from_secs(1) {
                publish(self.snapshot());
                last_publish = Instant::now();
                changed = false;
            }
        }
        if changed {
            publish(self.snapshot());
        }
        self.first_done = true;
        Ok(walk_time)
    }

    /// Hash `f` (see [`Hashed`]); `progress(n)` after every `n` bytes.
    fn hash(&mut self, f: &Found, progress: &mut dyn FnMut(u64)) -> io::Result<Hashed> {
        let mut file = File::open(&f.path)?;
        let meta = file.metadata()?;
        if !meta.is_file() {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "not a regular file"));
        }
        let stamp = Stamp::of(&meta);
        // Wait until a later write would get other times (see the module docs).
        let coarse = stamp.mtime.1 == 0 && stamp.ctime.1 == 0;
        let settle = if coarse { self.options.settle_coarse } else { self.options.settle };
        let settled_ns = stamp.changed_ns() + settle.as_nanos() as i128;
        loop {
            let wait = settled_ns - now_ns();
            if wait <= 0 {
                break;
            }
            if self.shared.stop.load(Ordering::Acquire) {
                return Ok(Hashed::Changing);
            }
            std::thread::sleep(Duration::from_nanos(wait.min(100_000_000) as u64));
            if Stamp::of(&file.metadata()?) != stamp {
                return Ok(Hashed::Changing);
            }
        }
        let mut builder = OutboardBuilder::new();
        loop {
            if self.shared.stop.load(Ordering::Acquire) {
                return Ok(Hashed::Changing);
            }
            let n = match file.read(&mut self.buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            builder.update(&self.buf[..n]);
            progress(n as u64);
        }
        let outboard = builder.finish();
        // Changed while hashed: the hash may mix old and new bytes.
        if Stamp::of(&file.metadata()?) != stamp || outboard.size() != stamp.size {
            return Ok(Hashed::Changing);
        }
        Ok(Hashed::Entry(FileEntry {
            name: f.name.clone(),
            path: f.path.clone(),
            file,
            stamp,
            outboard,
            stale: AtomicBool::new(false),
        }))
    }
}

/// Objects in a directory, served from open files and kept up to date (see the module
/// docs). Serve it as it is — it is a [`Served`], whose refresh takes up changes — or read
/// it as a [`Catalog`] (the objects as of the last refresh). Build one with [`open_dir`] or
/// [`DirCatalog::open`]; [`DirCatalog::watch`] starts the background scanner.
pub struct DirCatalog {
    /// This handle's view (more: [`DirCatalog::view`]).
    view: DirView,
    mailbox: Arc<Mailbox>,
    shared: Arc<Shared>,
    /// The indexer, while no scanner thread owns it.
    indexer: Option<Indexer>,
    scanner: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for DirCatalog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DirCatalog")
            .field("objects", &self.view.current.entries.len())
            .field("watching", &self.scanner.is_some())
            .finish_non_exhaustive()
    }
}

/// Index the regular files under `dir`, choosing what to print (no background rescans:
/// see [`DirCatalog::watch`]).
pub fn open_dir(dir: impl AsRef<Path>, progress: IndexProgress) -> Result<DirCatalog> {
    DirCatalog::open(dir, DirOptions { progress, ..DirOptions::default() })
}

impl DirCatalog {
    /// Index the regular files under `dir` (in this thread; progress on stderr if asked).
    pub fn open(dir: impl AsRef<Path>, options: DirOptions) -> Result<DirCatalog> {
        let dir = dir.as_ref();
        let cannot = |e| Error::io(format!("cannot open directory {}", dir.display()), e);
        let root = fs::canonicalize(dir).map_err(cannot)?;
        if !fs::metadata(&root).map_err(cannot)?.is_dir() {
            return Err(Error::io(
                format!("cannot serve {}", dir.display()),
                io::Error::new(io::ErrorKind::NotADirectory, "not a directory"),
            ));
        }
        let shared = Arc::new(Shared {
            pending: Mutex::new(HashSet::new()),
            wake: Mutex::new(false),
            cond: Condvar::new(),
            stop: AtomicBool::new(false),
        });
        let mut indexer = Indexer {
            root,
            options,
            known: BTreeMap::new(),
            shared: shared.clone(),
            buf: vec![0u8; HASH_BUF],
            warned: HashSet::new(),
            first_done: false,
        };
        indexer.scan(&mut |_| {})?;
        let mailbox = Arc::new(Mailbox {
            latest: Mutex::new(Arc::new(indexer.snapshot())),
            generation: AtomicU64::new(0),
            retired: Mutex::default(),
        });
        Ok(DirCatalog { view: DirView::new(mailbox.clone()), mailbox, shared, indexer: Some(indexer), scanner: None })
    }

    /// Rescan the directory every `every` (and at once when a served file is seen to have
    /// changed) on a background thread. Without it, a changed file is only dropped (its EID
    /// answered `UnknownContent`), and [`DirCatalog::rescan`] picks up changes.
    pub fn watch(mut self, every: Duration) -> Result<DirCatalog> {
        let Some(mut indexer) = self.indexer.take() else { return Ok(self) };
        let mailbox = self.mailbox.clone();
        let every = every.max(Duration::from_millis(10));
        let thread = std::thread::Builder::new().name("rdtp-index".into()).spawn(move || {
            // The stop signals belong to the serving thread's wait, not here.
            let _blocked = signals::Blocked::new(&signals::STOP);
            // SAFETY: setpriority on this thread's own id; failure only leaves the priority.
            unsafe {
                libc::setpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t, 10);
            }
            let mut interval = every;
            loop {
                {
                    let deadline = Instant::now() + interval;
                    let mut wake = lock(&indexer.shared.wake);
                    while !*wake && !indexer.shared.stop.load(Ordering::Acquire) {
                        let left = deadline.saturating_duration_since(Instant::now());
                        if left.is_zero() {
                            break;
                        }
                        wake = indexer.shared.cond.wait_timeout(wake, left).unwrap_or_else(|p| p.into_inner()).0;
                    }
                    *wake = false;
                }
                if indexer.shared.stop.load(Ordering::Acquire) {
                    break;
                }
                lock(&mailbox.retired).clear();
                match indexer.scan(&mut |s| mailbox.publish(s)) {
                    Ok(walk) => interval = every.max(walk * 10),
                    Err(e) => {
                        if indexer.options.progress == IndexProgress::Stderr {
                            eprintln!("rdtp: warning: rescanning {}: {e}", indexer.root.display());
                        }
                    }
                }
            }
        });
        match thread {
            Ok(t) => {
                self.scanner = Some(t);
                Ok(self)
            }
            Err(e) => Err(Error::network("cannot start the indexing thread", e)),
        }
    }

    /// Scan the directory now and take up what changed. While [`DirCatalog::watch`]ing,
    /// this only wakes the background scanner (its result arrives with a later refresh).
    pub fn rescan(&mut self) -> Result<()> {
        match self.indexer.as_mut() {
            Some(ix) => {
                let mailbox = &self.mailbox;
                ix.scan(&mut |s| mailbox.publish(s))?;
                self.view.refresh();
                lock(&self.mailbox.retired).clear();
                Ok(())
            }
            None => {
                self.shared.nudge();
                Ok(())
            }
        }
    }

    /// Sum of the objects' sizes.
    pub fn total_size(&self) -> u64 {
        self.view.total_size()
    }

    /// Another handle on these objects for another serving thread, with its own read
    /// windows; it takes up the changes the scanner finds on its own refreshes.
    pub fn view(&self) -> DirView {
        DirView::new(self.mailbox.clone())
    }
}

impl Served for DirCatalog {
    type Catalog = DirView;

    fn catalog(&self) -> &DirView {
        &self.view
    }

    fn refresh(&mut self) {
        self.view.refresh();
    }
}

impl Parallel for DirCatalog {
    type Worker = DirView;
    fn worker(&self) -> DirView {
        self.view()
    }
}

impl Catalog for DirCatalog {
    fn size_of(&self, eid: &Eid) -> Option<u64> {
        self.view.size_of(eid)
    }
    fn read_at(&self, eid: &Eid, offset: u64, buf: &mut [u8]) -> std::result::Result<(), ReadError> {
        self.view.read_at(eid, offset, buf)
    }
    fn will_read(&self, eid: &Eid, offset: u64, len: u64) {
        self.view.will_read(eid, offset, len);
    }
    fn resolve(&self, name: &str) -> Option<(Eid, u64)> {
        self.view.resolve(name)
    }
    fn is_pending(&self, name: &str) -> bool {
        self.view.is_pending(name)
    }
    fn name_of(&self, eid: &Eid) -> Option<&str> {
        self.view.name_of(eid)
    }
    fn len(&self) -> usize {
        self.view.len()
    }
    fn entry(&self, index: usize) -> Option<ListEntry<'_>> {
        self.view.entry(index)
    }
    fn outboard(&self, eid: &Eid) -> Option<&Outboard> {
        self.view.outboard(eid)
    }
}

impl Drop for DirCatalog {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Release);
        self.shared.nudge();
        if let Some(t) = self.scanner.take() {
            let _ = t.join();
        }
    }
}

fn walk(root: &Path, dir: &Path, out: &mut Vec<Found>, warn: &mut dyn FnMut(PathBuf, String)) -> Result<()> {
    let rd = fs::read_dir(dir).map_err(|e| Error::io(format!("cannot read directory {}", dir.display()), e))?;
    let mut children: Vec<_> = rd.filter_map(|e| e.ok()).map(|e| e.path()).collect();
    children.sort();
    for path in children {
        let Ok(lmeta) = fs::symlink_metadata(&path) else {
            continue;
        };
        let ft = lmeta.file_type();
        if ft.is_dir() {
            if let Err(e) = walk(root, &path, out, warn) {
                warn(path.clone(), format!("skipping {e}"));
            }
            continue;
        }
        let stamp = if ft.is_file() {
            Stamp::of(&lmeta)
        } else if ft.is_symlink() {
            match fs::canonicalize(&path) {
                Ok(target) if target.starts_with(root) => match fs::metadata(&target) {
                    Ok(m) if m.is_file() => Stamp::of(&m),
                    _ => {
                        let msg =
                            format!("skipping {}: symlink to something other than a regular file", path.display());
                        warn(path, msg);
                        continue;
                    }
                },
                _ => {
                    warn(path.clone(), format!("skipping {}: symlink leaves the served directory", path.display()));
                    continue;
                }
            }
        } else {
            continue; // sockets, fifos, devices
        };
        let Ok(rel) = path.strip_prefix(root) else {
            continue;
        };
        let mut parts = Vec::new();
        for c in rel.components() {
            match c.as_os_str().to_str() {
                Some(s) => parts.push(s),
                None => break,
            }
        }
        if parts.len() != rel.components().count() {
            warn(path.clone(), format!("skipping {}: name is not UTF-8", path.display()));
            continue;
        }
        let name = parts.join("/");
        if name.len() > RESOLVE_MAX_NAME {
            warn(path.clone(), format!("skipping {}: name longer than {RESOLVE_MAX_NAME} bytes", path.display()));
            continue;
        }
        out.push(Found { name, path, stamp });
    }
    Ok(())
}

/// Raise the soft open-file limit towards `want` (up to the hard limit); best effort.
fn raise_nofile_limit(want: u64) {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    if let Ok((soft, hard)) = getrlimit(Resource::RLIMIT_NOFILE)
        && soft < want
    {
        let _ = setrlimit(Resource::RLIMIT_NOFILE, want.min(hard), hard);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indexes_files_recursively_and_serves_them() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("sub/deeper")).unwrap();
        fs::write(dir.path().join("a.txt"), b"hello").unwrap();
        let big: Vec<u8> = (0..3_000_000u32).map(|i| (i * 7 % 253) as u8).collect();
        fs::write(dir.path().join("sub/deeper/big.bin"), &big).unwrap();
        fs::write(dir.path().join("sub/empty"), b"").unwrap();
        std::os::unix::fs::symlink(dir.path().join("a.txt"), dir.path().join("link")).unwrap();
        std::os::unix::fs::symlink("/etc/hostname", dir.path().join("outside")).unwrap();
        std::os::unix::fs::symlink(dir.path().join("sub"), dir.path().join("dirlink")).unwrap();

        let c = open_dir(dir.path(), IndexProgress::Quiet).unwrap();
        let names: Vec<_> = (0..c.len()).map(|i| c.entry(i).unwrap().name.to_string()).collect();
        assert_eq!(names, ["a.txt", "link", "sub/deeper/big.bin", "sub/empty"]);
        assert_eq!(c.total_size(), 5 + 5 + 3_000_000);

        let (eid, size) = c.resolve("sub/deeper/big.bin").unwrap();
        assert_eq!((eid, size), (Eid::of(&big), big.len() as u64));
        let mut buf = vec![0u8; 1000];
        c.read_at(&eid, 2_000_000, &mut buf).unwrap();
        assert_eq!(&buf[..], &big[2_000_000..2_001_000]);
        // Across windows, and the last bytes.
        let mut buf = vec![0u8; 200_000];
        c.read_at(&eid, 60_000, &mut buf).unwrap();
        assert!(buf[..] == big[60_000..260_000]);
        let mut tail = [0u8; 500];
        c.read_at(&eid, 2_999_500, &mut tail).unwrap();
        assert_eq!(&tail[..], &big[2_999_500..]);
        assert!(c.read_at(&eid, 2_999_500, &mut [0u8; 1000]).is_err());
        assert_eq!(c.resolve("link").unwrap().0, Eid::of(b"hello"));
        assert_eq!(c.resolve("sub/empty").unwrap(), (Eid::of(b""), 0));
        assert!(c.outboard(&eid).is_some_and(|o| o.root() == eid));
    }

    #[test]
    fn missing_directory_is_a_clear_io_error() {
        let e = open_dir("/nonexistent/rdtp-test-dir", IndexProgress::Quiet).unwrap_err();
        assert_eq!(e.exit_code(), crate::error::EXIT_IO);
        assert!(e.to_string().contains("/nonexistent/rdtp-test-dir"), "{e}");
        let f = tempfile::NamedTempFile::new().unwrap();
        let e = open_dir(f.path(), IndexProgress::Quiet).unwrap_err();
        assert!(e.to_string().contains("not a directory"), "{e}");
    }

    fn pattern(len: usize, seed: u8) -> Vec<u8> {
        (0..len).map(|i| (i as u32).wrapping_mul(2_654_435_761).to_le_bytes()[2] ^ seed).collect()
    }

    fn opts() -> DirOptions {
        DirOptions::default()
    }

    /// Overwritten in place with other bytes of the same size: reads of the old EID fail
    /// with `Gone` (never the new bytes), the name stops resolving to it, and a rescan
    /// serves the new EID.
    #[test]
    fn a_file_overwritten_in_place_is_dropped_then_served_under_its_new_eid() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.bin");
        let (old, new) = (pattern(300_000, 1), pattern(300_000, 2));
        fs::write(&path, &old).unwrap();
        let mut c = DirCatalog::open(dir.path(), opts()).unwrap();
        let (eid, _) = c.resolve("f.bin").unwrap();
        let mut buf = vec![0u8; 1402];
        c.read_at(&eid, 0, &mut buf).unwrap();
        assert_eq!(buf, old[..1402]);
        // No pause needed: the file was hashed once settled, so this write gets other times.
        fs::write(&path, &new).unwrap();
        assert_eq!(c.read_at(&eid, 100_000, &mut buf), Err(ReadError::Gone));
        assert_eq!(c.size_of(&eid), None, "the old EID is no longer served");
        assert!(c.resolve("f.bin").is_none() && c.is_pending("f.bin"), "the name waits for its new hash");
        c.rescan().unwrap();
        let (eid2, _) = c.resolve("f.bin").unwrap();
        assert_eq!(eid2, Eid::of(&new));
        c.read_at(&eid2, 100_000, &mut buf).unwrap();
        assert_eq!(buf, new[100_000..101_402]);
        assert_eq!(c.size_of(&eid), None);
        assert!(!c.is_pending("f.bin"));
    }

    /// The same, found by the name check: the file is replaced (renamed over, another
    /// inode) or deleted, and nothing was read since.
    #[test]
    fn replaced_deleted_and_new_files() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (pattern(50_000, 3), pattern(70_000, 4));
        fs::write(dir.path().join("a"), &a).unwrap();
        fs::write(dir.path().join("b"), &b).unwrap();
        let mut c = DirCatalog::open(dir.path(), opts()).unwrap();
        let (eid_a, _) = c.resolve("a").unwrap();
        let (eid_b, _) = c.resolve("b").unwrap();
        // Replace a by renaming another file over it; delete b; add c.
        let a2 = pattern(50_000, 5);
        fs::write(dir.path().join("a.tmp"), &a2).unwrap();
        fs::rename(dir.path().join("a.tmp"), dir.path().join("a")).unwrap();
        fs::remove_file(dir.path().join("b")).unwrap();
        let cc = pattern(10_000, 6);
        fs::write(dir.path().join("c"), &cc).unwrap();
        assert!(c.resolve("a").is_none() && c.is_pending("a"), "replaced: pending, not the old EID");
        assert!(c.resolve("b").is_none() && !c.is_pending("b"), "deleted: unknown");
        assert!(c.resolve("c").is_none(), "new files appear with the next scan");
        c.rescan().unwrap();
        assert_eq!(c.resolve("a").unwrap().0, Eid::of(&a2));
        assert!(c.resolve("b").is_none() && c.size_of(&eid_b).is_none());
        assert_eq!(c.resolve("c").unwrap(), (Eid::of(&cc), 10_000));
        assert!(c.size_of(&eid_a).is_none());
        let names: Vec<_> = (0..c.len()).map(|i| c.entry(i).unwrap().name.to_string()).collect();
        assert_eq!(names, ["a", "c"]);
    }

    /// A file just written is hashed only once its times are `settle` old, so that a later
    /// write in the same timestamp tick cannot go unseen.
    #[test]
    fn a_file_just_written_is_hashed_once_it_has_settled() {
        let dir = tempfile::tempdir().unwrap();
        let data = pattern(100_000, 7);
        fs::write(dir.path().join("r.bin"), &data).unwrap();
        let written = Instant::now();
        let settle = Duration::from_millis(400);
        let c = DirCatalog::open(dir.path(), DirOptions { settle, ..DirOptions::default() }).unwrap();
        // Less a clock tick of timestamp granularity (the time was taken just after it).
        assert!(
            written.elapsed() >= settle - Duration::from_millis(20),
            "hashed {:?} after the write",
            written.elapsed()
        );
        assert_eq!(c.resolve("r.bin").unwrap().0, Eid::of(&data));
    }

    /// Background rescans: a new file appears, a deleted one disappears, a changed one
    /// comes back under its new EID, without any call but the runtime's refresh.
    #[test]
    fn watching_picks_up_changes_in_the_background() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("x"), b"first").unwrap();
        let mut c = DirCatalog::open(dir.path(), opts()).unwrap().watch(Duration::from_millis(20)).unwrap();
        fs::write(dir.path().join("y"), b"second").unwrap();
        fs::remove_file(dir.path().join("x")).unwrap();
        let t0 = Instant::now();
        loop {
            c.refresh();
            if let Some((eid, _)) = c.catalog().resolve("y")
                && c.catalog().resolve("x").is_none()
                && c.catalog().len() == 1
            {
                assert_eq!(eid, Eid::of(b"second"));
                break;
            }
            assert!(t0.elapsed() < Duration::from_secs(30), "the scanner did not pick up the changes");
            std::thread::sleep(Duration::from_millis(10));
        }
        drop(c); // stops and joins the scanner
    }

    #[test]
    fn reads_with_and_without_a_range_announced_give_the_files_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let data = pattern(300_001, 3);
        fs::write(dir.path().join("f"), &data).unwrap();
        let c = DirCatalog::open(dir.path(), opts()).unwrap();
        let v = c.view();
        let eid = Eid::of(&data);
        let mut x = 12345u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for i in 0..2000 {
            // Requests of 1–80 units of 1402 bytes at scattered or consecutive offsets, read
            // unit by unit as the server does, sometimes announced and sometimes not.
            let units = next() % 80 + 1;
            let start = if i % 3 == 0 { (i as u64 * 1402 * 7) % data.len() as u64 } else { next() % data.len() as u64 };
            let end = (start + units * 1402).min(data.len() as u64);
            if i % 4 != 0 {
                v.will_read(&eid, start, end - start);
            }
            let mut pos = start;
            while pos < end {
                let n = (end - pos).min(1402) as usize;
                let mut buf = vec![0u8; n];
                v.read_at(&eid, pos, &mut buf).unwrap();
                assert!(buf[..] == data[pos as usize..pos as usize + n], "bytes at {pos}");
                pos += n as u64;
            }
        }
    }

    #[test]
    fn every_workers_view_takes_up_changes_on_its_own_refresh() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("x"), b"first").unwrap();
        let mut c = DirCatalog::open(dir.path(), opts()).unwrap();
        let mut views: Vec<DirView> = (0..3).map(|_| c.worker()).collect();
        let mut buf = [0u8; 5];
        for v in &views {
            v.read_at(&Eid::of(b"first"), 0, &mut buf).unwrap();
            assert_eq!(&buf, b"first");
        }
        fs::write(dir.path().join("y"), b"other").unwrap();
        std::thread::sleep(Duration::from_millis(60)); // let it settle
        c.rescan().unwrap();
        assert!(c.catalog().resolve("y").is_some());
        // A view sees the old objects until it refreshes, then the new ones.
        assert!(views[0].resolve("y").is_none());
        for v in &mut views {
            v.refresh();
            let (eid, _) = v.resolve("y").expect("the new file");
            v.read_at(&eid, 0, &mut buf).unwrap();
            assert_eq!(&buf, b"other");
        }
        // Views outlive the catalogue and keep serving what they have.
        drop(c);
        views[1].read_at(&Eid::of(b"first"), 0, &mut buf).unwrap();
    }
}
