//! [`DirCatalog`]: a catalogue over the regular files of a directory.
//!
//! The directory is walked once, recursively. Each regular file becomes one object named
//! by its path relative to the directory (components joined with `/`), identified by the
//! BLAKE3 hash of its bytes (hashed streaming, 1 MiB at a time, never loaded whole). The
//! file stays open and Data packets are read from it with `pread`, so the catalogue holds
//! one file descriptor per object and no content.
//!
//! Skipped (with a warning on stderr): non-regular files, symlinks that point outside the
//! directory or to directories (no loops), names that are not UTF-8 or are longer than a
//! resolve request can carry. Files must not change while served: a changed file is
//! detected by receivers (its bytes no longer hash to its EID).

use std::fs::{self, File};
use std::io::{self, Read};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rdtp_proto::server::{Content, Index, ReadError};
use rdtp_proto::wire::RESOLVE_MAX_NAME;

use crate::error::{Error, Result};

/// One served file, kept open and read with `pread`.
#[derive(Debug)]
pub struct FileContent(File);

impl Content for FileContent {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> std::result::Result<(), ReadError> {
        self.0.read_exact_at(buf, offset).map_err(|e| ReadError(e.to_string()))
    }
}

/// Objects in a directory, served from open files: the core's [`Index`] over
/// [`FileContent`]. Build one with [`open_dir`].
pub type DirCatalog = Index<FileContent>;

/// How chatty [`open_dir`] is on stderr.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IndexProgress {
    /// Print nothing.
    Quiet,
    /// Print warnings about skipped entries, and progress when indexing takes long.
    Stderr,
}

/// Index the regular files under `dir`, choosing what to print.
pub fn open_dir(dir: impl AsRef<Path>, progress: IndexProgress) -> Result<DirCatalog> {
    let dir = dir.as_ref();
    let root = fs::canonicalize(dir).map_err(|e| Error::io(format!("cannot open directory {}", dir.display()), e))?;
    let meta = fs::metadata(&root).map_err(|e| Error::io(format!("cannot open directory {}", dir.display()), e))?;
    if !meta.is_dir() {
        return Err(Error::io(
            format!("cannot serve {}", dir.display()),
            io::Error::new(io::ErrorKind::NotADirectory, "not a directory"),
        ));
    }
    let warn = |msg: String| {
        if progress == IndexProgress::Stderr {
            eprintln!("rdtp: warning: {msg}");
        }
    };
    let mut found = Vec::new();
    walk(&root, &root, &mut found, &warn)?;
    raise_nofile_limit(found.len() as u64 + 64);

    let total: u64 = found.iter().map(|f| f.size).sum();
    let started = Instant::now();
    let mut last_report = started;
    let mut hashed = 0u64;
    let mut buf = vec![0u8; 1 << 20];
    let mut entries = Vec::with_capacity(found.len());
    for (i, f) in found.into_iter().enumerate() {
        let mut file = match File::open(&f.path) {
            Ok(file) => file,
            Err(e) if e.raw_os_error() == Some(libc::EMFILE) || e.raw_os_error() == Some(libc::ENFILE) => {
                return Err(Error::io(
                    format!("too many files to keep open ({} entries; raise `ulimit -n`)", i + 1),
                    e,
                ));
            }
            Err(e) => {
                warn(format!("skipping {}: {e}", f.path.display()));
                continue;
            }
        };
        // One pass: the hash tree (verified streaming) and, from it, the EID.
        let mut hasher = rdtp_proto::tree::OutboardBuilder::new();
        let mut size = 0u64;
        loop {
            let n = match file.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    return Err(Error::io(format!("cannot read {}", f.path.display()), e));
                }
            };
            hasher.update(&buf[..n]);
            size += n as u64;
            hashed += n as u64;
            if progress == IndexProgress::Stderr && last_report.elapsed() >= Duration::from_secs(1) {
                last_report = Instant::now();
                eprintln!(
                    "rdtp: indexing {}: {:.1}/{:.1} MB hashed",
                    root.display(),
                    hashed as f64 / 1e6,
                    total as f64 / 1e6
                );
            }
        }
        let outboard = hasher.finish();
        debug_assert_eq!(outboard.size(), size);
        entries.push((f.name, outboard, FileContent(file)));
    }
    Ok(Index::from_outboards(entries))
}

struct Found {
    name: String,
    path: PathBuf,
    size: u64,
}

fn walk(root: &Path, dir: &Path, out: &mut Vec<Found>, warn: &dyn Fn(String)) -> Result<()> {
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
                warn(format!("skipping {e}"));
            }
            continue;
        }
        let size = if ft.is_file() {
            lmeta.len()
        } else if ft.is_symlink() {
            match fs::canonicalize(&path) {
                Ok(target) if target.starts_with(root) => match fs::metadata(&target) {
                    Ok(m) if m.is_file() => m.len(),
                    _ => {
                        warn(format!("skipping {}: symlink to something other than a regular file", path.display()));
                        continue;
                    }
                },
                _ => {
                    warn(format!("skipping {}: symlink leaves the served directory", path.display()));
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
            warn(format!("skipping {}: name is not UTF-8", path.display()));
            continue;
        }
        let name = parts.join("/");
        if name.len() > RESOLVE_MAX_NAME {
            warn(format!("skipping {}: name longer than {RESOLVE_MAX_NAME} bytes", path.display()));
            continue;
        }
        out.push(Found { name, path, size });
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
    use rdtp_proto::Eid;
    use rdtp_proto::server::Catalog;

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
        assert!(c.read_at(&eid, 2_999_500, &mut buf).is_err());
        assert_eq!(c.resolve("link").unwrap().0, Eid::of(b"hello"));
        assert_eq!(c.resolve("sub/empty").unwrap(), (Eid::of(b""), 0));
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
}
