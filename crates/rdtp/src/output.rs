//! Where a fetched object goes: stdout, or a file that appears only once the whole object
//! arrived and matched its EID (`rdtp fetch -o FILE`).
//!
//! A regular file is written under a temporary name in the same directory
//! (`.FILE.rdtp-PID-RANDOM.part`, created exclusively) and renamed over `FILE` by
//! [`Output::finish`], so `FILE` is never seen half written or unverified: if the fetch
//! fails, is interrupted (SIGINT/SIGTERM, handled by the caller) or the output is dropped
//! unfinished, the temporary file is removed and `FILE` is left as it was — absent, or
//! with its previous content. A symbolic link is followed (its target is replaced, the
//! link stays), and a file that existed keeps its permission bits. Outputs that are not
//! regular files (`/dev/null`, a FIFO, a terminal) are written directly. Only a crash that
//! leaves no chance to clean up (SIGKILL, power loss) can leave a `.part` file behind; the
//! next fetch to the same `FILE` removes those whose process is gone
//! ([`remove_stale_parts`]), never one of a running process.

use std::ffi::OsString;
use std::fs::{self, File, OpenOptions, Permissions};
use std::io::{self, BufWriter, Write};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Small writes are gathered up to this; the fetch's batches of verified blocks (usually
/// larger) go straight to the file without being copied here.
const BUFFER: usize = 64 << 10;

/// Longest file name most file systems take (`NAME_MAX`); the temporary name is cut to fit.
const NAME_MAX: usize = 255;

/// The output of a fetch. Write through [`Output::writer`], then [`Output::finish`] on
/// success; dropping it unfinished removes the temporary file.
pub struct Output {
    kind: Kind,
    /// What [`Output::writer`] gives once the output is finished (it cannot be reached).
    sink: io::Sink,
}

enum Kind {
    Stdout(BufWriter<io::StdoutLock<'static>>),
    /// Not a regular file: written in place.
    Direct(BufWriter<File>),
    /// A temporary file renamed over `dest` on success.
    Temp {
        file: BufWriter<File>,
        tmp: PathBuf,
        dest: PathBuf,
        permissions: Option<Permissions>,
    },
    /// Finished or discarded.
    Done,
}

impl std::fmt::Debug for Output {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.kind {
            Kind::Stdout(_) => f.write_str("Output(stdout)"),
            Kind::Direct(_) => f.write_str("Output(direct)"),
            Kind::Temp { tmp, dest, .. } => write!(f, "Output({} → {})", tmp.display(), dest.display()),
            Kind::Done => f.write_str("Output(done)"),
        }
    }
}

impl Output {
    /// `-` for stdout, else a path (see the module docs). Errors say which path and why.
    pub fn open(path: &str) -> Result<Output> {
        if path == "-" {
            return Ok(Output::new(Kind::Stdout(BufWriter::with_capacity(BUFFER, io::stdout().lock()))));
        }
        let given = Path::new(path);
        let cannot = |e: io::Error| Error::io(format!("cannot open output file {path}"), e);
        let (dest, permissions) = match fs::metadata(given) {
            Ok(m) if m.is_dir() => return Err(cannot(io::Error::new(io::ErrorKind::IsADirectory, "is a directory"))),
            Ok(m) if !m.is_file() => {
                let f = OpenOptions::new().write(true).truncate(true).open(given).map_err(cannot)?;
                return Ok(Output::new(Kind::Direct(BufWriter::with_capacity(BUFFER, f))));
            }
            // Replace the file a link points to, not the link.
            Ok(m) => (fs::canonicalize(given).map_err(cannot)?, Some(m.permissions())),
            Err(e) if e.kind() == io::ErrorKind::NotFound => (given.to_path_buf(), None),
            Err(e) => return Err(cannot(e)),
        };
        let Some(name) = dest.file_name() else {
            return Err(cannot(io::Error::new(io::ErrorKind::InvalidInput, "not a file name")));
        };
        let dir = match dest.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        remove_stale_parts(&dir, name.as_bytes());
        let (file, tmp) = create_temp(&dir, name.as_bytes()).map_err(cannot)?;
        let file = BufWriter::with_capacity(BUFFER, file);
        Ok(Output::new(Kind::Temp { file, tmp, dest, permissions }))
    }

    fn new(kind: Kind) -> Output {
        Output { kind, sink: io::sink() }
    }

    /// Where to write the object.
    pub fn writer(&mut self) -> &mut dyn Write {
        match &mut self.kind {
            Kind::Stdout(w) => w,
            Kind::Direct(w) | Kind::Temp { file: w, .. } => w,
            Kind::Done => &mut self.sink,
        }
    }

    /// The temporary file being written, if any (it becomes the output on success).
    pub fn temp_path(&self) -> Option<&Path> {
        match &self.kind {
            Kind::Temp { tmp, .. } => Some(tmp),
            _ => None,
        }
    }

    /// Whether the output is a regular file (content goes there, not to stdout or a device).
    pub fn is_file(&self) -> bool {
        matches!(self.kind, Kind::Temp { .. })
    }

    /// The object is complete and verified: flush it and put it in place.
    pub fn finish(mut self) -> Result<()> {
        let flushed = |e| Error::io("cannot write the output", e);
        match std::mem::replace(&mut self.kind, Kind::Done) {
            Kind::Stdout(mut w) => w.flush().map_err(flushed),
            Kind::Direct(mut w) => w.flush().map_err(flushed),
            Kind::Done => Ok(()),
            Kind::Temp { file, tmp, dest, permissions } => {
                // On any failure here the temporary file is removed.
                let remove = |e: Error| {
                    let _ = fs::remove_file(&tmp);
                    e
                };
                let f = file.into_inner().map_err(|e| remove(flushed(e.into_error())))?;
                if let Some(p) = permissions {
                    f.set_permissions(p)
                        .map_err(|e| remove(Error::io(format!("cannot set the mode of {}", tmp.display()), e)))?;
                }
                drop(f);
                fs::rename(&tmp, &dest)
                    .map_err(|e| remove(Error::io(format!("cannot rename {} to {}", tmp.display(), dest.display()), e)))
            }
        }
    }

    /// Give up: remove the temporary file (what dropping does; explicit for readers).
    pub fn discard(self) {
        drop(self);
    }
}

impl Drop for Output {
    fn drop(&mut self) {
        if let Kind::Temp { file, tmp, .. } = std::mem::replace(&mut self.kind, Kind::Done) {
            // Unflushed bytes are thrown away with the file, not written first.
            drop(file.into_parts());
            let _ = fs::remove_file(&tmp);
        }
    }
}

/// The temporary name of `name` for process `pid` with random part `r`:
/// `.NAME.rdtp-PID-RANDOM.part`, NAME cut so the whole fits `NAME_MAX`.
fn temp_name(name: &[u8], pid: u32, r: u32) -> Vec<u8> {
    let suffix = format!(".rdtp-{pid}-{r:08x}.part");
    let keep = name.len().min(NAME_MAX - 1 - suffix.len());
    let mut file_name = Vec::with_capacity(NAME_MAX);
    file_name.push(b'.');
    file_name.extend_from_slice(&name[..keep]);
    file_name.extend_from_slice(suffix.as_bytes());
    file_name
}

/// The process id in `file`, if it is a temporary name of `name` ([`temp_name`]).
fn temp_owner(file: &[u8], name: &[u8]) -> Option<u32> {
    let inner = file.strip_prefix(b".")?.strip_suffix(b".part")?;
    let at = inner.windows(6).rposition(|w| w == b".rdtp-")?;
    let (pid, r) = std::str::from_utf8(&inner[at + 6..]).ok()?.split_once('-')?;
    let pid: u32 = pid.parse().ok()?;
    let r = u32::from_str_radix(r, 16).ok().filter(|_| r.len() == 8)?;
    (temp_name(name, pid, r) == file).then_some(pid)
}

/// Whether process `pid` is gone (no such process; one we may not signal is alive).
fn process_gone(pid: u32) -> bool {
    let Ok(pid) = i32::try_from(pid) else { return true };
    pid > 0 && nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None) == Err(nix::errno::Errno::ESRCH)
}

/// Remove the temporary files of `name` in `dir` that fetches killed before they could
/// clean up (SIGKILL, a crash) left behind: those whose process is gone. A running
/// fetch's file — another process's, or this process's own (a library user may run two
/// fetches to one file) — is never removed. Best effort: errors are ignored.
pub fn remove_stale_parts(dir: &Path, name: &[u8]) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let file = entry.file_name();
        if let Some(pid) = temp_owner(file.as_bytes(), name)
            && pid != std::process::id()
            && process_gone(pid)
            && entry.file_type().is_ok_and(|t| t.is_file())
        {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// Create `.NAME.rdtp-PID-RANDOM.part` in `dir`, exclusively (never an existing file).
fn create_temp(dir: &Path, name: &[u8]) -> io::Result<(File, PathBuf)> {
    let mut last = None;
    for _ in 0..16 {
        let mut r = [0u8; 4];
        if getrandom::fill(&mut r).is_err() {
            r = (std::process::id() ^ crate::random_seed() as u32).to_le_bytes();
        }
        let file_name = temp_name(name, std::process::id(), u32::from_le_bytes(r));
        let path = dir.join(OsString::from_vec(file_name));
        match OpenOptions::new().write(true).create_new(true).mode(0o666).open(&path) {
            Ok(f) => return Ok((f, path)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::other("no free temporary name")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn entries(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> =
            fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        v.sort();
        v
    }

    #[test]
    fn the_file_appears_only_when_finished() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("out.bin");
        let mut out = Output::open(dest.to_str().unwrap()).unwrap();
        out.writer().write_all(b"hello").unwrap();
        assert!(!dest.exists(), "visible before it is complete");
        let tmp = out.temp_path().unwrap().to_path_buf();
        assert_eq!(tmp.parent(), Some(dir.path()), "the temporary file must be in the same directory");
        assert!(tmp.file_name().unwrap().to_str().unwrap().starts_with(".out.bin.rdtp-"), "{tmp:?}");
        out.finish().unwrap();
        assert_eq!(fs::read(&dest).unwrap(), b"hello");
        assert_eq!(entries(dir.path()), ["out.bin"]);
    }

    #[test]
    fn dropping_unfinished_leaves_nothing_and_keeps_an_existing_file() {
        let dir = tempfile::tempdir().unwrap();
        let fresh = dir.path().join("fresh");
        let mut out = Output::open(fresh.to_str().unwrap()).unwrap();
        out.writer().write_all(&[7u8; 3 << 20]).unwrap(); // past the buffer: bytes on disk
        drop(out);
        assert_eq!(entries(dir.path()), Vec::<String>::new());

        let old = dir.path().join("old");
        fs::write(&old, b"previous").unwrap();
        fs::set_permissions(&old, Permissions::from_mode(0o640)).unwrap();
        let mut out = Output::open(old.to_str().unwrap()).unwrap();
        out.writer().write_all(b"partial").unwrap();
        out.discard();
        assert_eq!(fs::read(&old).unwrap(), b"previous");
        assert_eq!(entries(dir.path()), ["old"]);
        // Replaced on success, keeping its mode.
        let mut out = Output::open(old.to_str().unwrap()).unwrap();
        out.writer().write_all(b"new").unwrap();
        out.finish().unwrap();
        assert_eq!(fs::read(&old).unwrap(), b"new");
        assert_eq!(fs::metadata(&old).unwrap().permissions().mode() & 0o777, 0o640);
    }

    /// Issue 23 item 15: `.part` files a SIGKILLed fetch left are removed by the next fetch
    /// to the same file, when their process is gone; a live process's and other files' stay.
    #[test]
    fn stale_temporary_files_of_dead_fetches_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        // A process id no process can have (above Linux's largest pid_max, 2^22).
        let dead = 4_194_305;
        let live = std::os::unix::process::parent_id(); // the test runner: alive
        let name = b"out.bin";
        let touch = |n: Vec<u8>| fs::write(dir.path().join(OsString::from_vec(n)), b"partial").unwrap();
        touch(temp_name(name, dead, 0xdead_beef));
        touch(temp_name(name, live, 0x0000_0001));
        touch(temp_name(b"other.bin", dead, 0x0000_0002)); // another target
        touch(temp_name(b"x".repeat(NAME_MAX).as_slice(), dead, 0x0000_0003)); // cut name
        touch(b".out.bin.rdtp-4194305-zz.part".to_vec()); // not one of ours
        let mut out = Output::open(dir.path().join("out.bin").to_str().unwrap()).unwrap();
        out.writer().write_all(b"new").unwrap();
        let mine = out.temp_path().unwrap().file_name().unwrap().to_string_lossy().into_owned();
        let mut expect = vec![
            String::from_utf8(temp_name(name, live, 1)).unwrap(),
            String::from_utf8(temp_name(b"other.bin", dead, 2)).unwrap(),
            String::from_utf8(temp_name(b"x".repeat(NAME_MAX).as_slice(), dead, 3)).unwrap(),
            ".out.bin.rdtp-4194305-zz.part".to_string(),
            mine,
        ];
        expect.sort();
        assert_eq!(entries(dir.path()), expect);
        out.finish().unwrap();
        // The long name's own stale file goes when that name is fetched.
        let long = dir.path().join("x".repeat(NAME_MAX));
        Output::open(long.to_str().unwrap()).unwrap().finish().unwrap();
        assert!(!entries(dir.path()).iter().any(|e| e.ends_with("-00000003.part")), "{:?}", entries(dir.path()));
        assert_eq!(temp_owner(&temp_name(name, 42, 7), name), Some(42));
        assert_eq!(temp_owner(&temp_name(name, 42, 7), b"out.bi"), None);
    }

    #[test]
    fn links_devices_and_bad_paths() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("target");
        fs::write(&target, b"old").unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let mut out = Output::open(link.to_str().unwrap()).unwrap();
        out.writer().write_all(b"via link").unwrap();
        out.finish().unwrap();
        assert!(fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "the link stays a link");
        assert_eq!(fs::read(&target).unwrap(), b"via link");

        let mut null = Output::open("/dev/null").unwrap();
        assert!(!null.is_file() && null.temp_path().is_none());
        null.writer().write_all(b"gone").unwrap();
        null.finish().unwrap();

        let e = Output::open(dir.path().to_str().unwrap()).unwrap_err();
        assert!(e.to_string().contains("is a directory"), "{e}");
        assert_eq!(e.exit_code(), crate::error::EXIT_IO);
        let e = Output::open("/nonexistent-dir/rdtp/out").unwrap_err();
        assert!(e.to_string().contains("/nonexistent-dir/rdtp/out"), "{e}");
        assert_eq!(e.exit_code(), crate::error::EXIT_IO);

        // A name as long as a file system allows still gets a temporary name that fits.
        let long = dir.path().join("x".repeat(NAME_MAX));
        let mut out = Output::open(long.to_str().unwrap()).unwrap();
        out.writer().write_all(b"long").unwrap();
        out.finish().unwrap();
        assert_eq!(fs::read(&long).unwrap(), b"long");
    }
}
