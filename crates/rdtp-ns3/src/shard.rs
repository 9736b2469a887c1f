//! Sweeps shared by several machines: `--shard I/N` selects runs, `sweep.toml` records what a
//! result directory is a part of, and `--merge` checks the parts belong together and brings
//! their runs into one directory.
//!
//! A shard's directory holds `scenario.toml` (the file as run) and `sweep.toml`:
//!
//! ```toml
//! scenario = "experiments/fig7a.toml"   # as given on the command line
//! set = ["scenario.repeat=5"]           # the --set overrides
//! runs = 36                             # runs in the whole sweep
//! fingerprint = "3f0c…"                 # of every run's id and arguments
//! shard = "2/8"                         # absent for a whole sweep
//! ns3 = "3.44"                          # the ns-3 rdtp-sim was built with
//! ```
//!
//! The fingerprint is FNV-1a over the runs' ids and `--run-one` arguments (output directory
//! left out): shards of one sweep have the same one whatever machine ran them, and merging
//! the parts of different sweeps (another scenario, other overrides, a runner that
//! translates scenarios differently) is refused, and so is merging or resuming across ns-3
//! versions (their numbers differ).

use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};

use crate::error::Error;
use rdtp_scenario::{Run, run_args};
use serde::{Deserialize, Serialize};

/// `--shard I/N`: the runs whose index is I modulo N.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl Shard {
    /// Whether run `index` (its position in the whole sweep) belongs to this shard.
    pub fn has(&self, index: usize) -> bool {
        index % self.count == self.index
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// Parse `I/N` with 0 ≤ I < N.
pub fn parse(text: &str) -> Result<Shard, Error> {
    let bad = || Error::Shards(format!("--shard {text}: want I/N with 0 ≤ I < N (e.g. 0/4 … 3/4)"));
    let (i, n) = text.split_once('/').ok_or_else(bad)?;
    let (index, count): (usize, usize) = (i.trim().parse().map_err(|_| bad())?, n.trim().parse().map_err(|_| bad())?);
    if count == 0 || index >= count {
        return Err(bad());
    }
    Ok(Shard { index, count })
}

/// `sweep.toml`: which sweep a result directory is (a part of).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    scenario: String,
    set: Vec<String>,
    runs: usize,
    fingerprint: String,
    shard: Option<String>,
    /// The ns-3 version the runs were simulated with; absent in directories written before
    /// rdtp-sim recorded it.
    #[serde(default)]
    ns3: Option<String>,
}

const FILE: &str = "sweep.toml";

impl Manifest {
    /// The manifest of `runs` (the whole sweep) of `scenario` with overrides `sets`, run as
    /// `shard`.
    pub fn new(scenario: &Path, sets: &[(String, String)], runs: &[Run], shard: Option<Shard>) -> Result<Self, Error> {
        Ok(Manifest {
            scenario: scenario.display().to_string(),
            set: sets.iter().map(|(k, v)| format!("{k}={v}")).collect(),
            runs: runs.len(),
            fingerprint: fingerprint(runs)?,
            shard: shard.map(|s| s.to_string()),
            ns3: crate::NS3_VERSION.map(String::from),
        })
    }

    /// Write `DIR/sweep.toml`.
    pub fn write(&self, dir: &Path) -> Result<(), Error> {
        let text = toml::to_string(self).map_err(|e| Error::file(Path::new(FILE), e))?;
        let path = dir.join(FILE);
        fs::write(&path, text).map_err(|e| Error::file(&path, e))
    }

    pub fn read(dir: &Path) -> Result<Self, Error> {
        let path = dir.join(FILE);
        let text = fs::read_to_string(&path).map_err(|e| {
            Error::Shards(format!(
                "{}: {e} (not a result directory of rdtp-sim, or written before --shard)",
                path.display()
            ))
        })?;
        toml::from_str(&text).map_err(|e| Error::file(&path, e))
    }

    /// The manifests of `dirs`, checked to describe one sweep, and the scenario text (as
    /// run, from the first directory's `scenario.toml`).
    pub fn read_all(dirs: &[PathBuf]) -> Result<(Self, String), Error> {
        let first = Self::read(&dirs[0])?;
        for d in &dirs[1..] {
            let m = Self::read(d)?;
            if (m.fingerprint.as_str(), m.runs) != (first.fingerprint.as_str(), first.runs) {
                return Err(Error::Shards(format!(
                    "{} and {} hold different sweeps ({} with {} runs, {} with {}): merge only shards of one",
                    dirs[0].display(),
                    d.display(),
                    first.scenario,
                    first.runs,
                    m.scenario,
                    m.runs
                )));
            }
            if m.ns3 != first.ns3 {
                return Err(Error::Shards(format!(
                    "{} and {} were simulated with different ns-3 versions ({} and {}): merge only runs of one",
                    dirs[0].display(),
                    d.display(),
                    first.ns3_version(),
                    m.ns3_version()
                )));
            }
        }
        let path = dirs[0].join("scenario.toml");
        let text = fs::read_to_string(&path).map_err(|e| Error::file(&path, e))?;
        Ok((first, text))
    }

    /// The ns-3 version the runs were simulated with, or "unrecorded".
    pub fn ns3_version(&self) -> &str {
        self.ns3.as_deref().unwrap_or("unrecorded")
    }

    /// The `--set` overrides the sweep was run with.
    pub fn sets(&self) -> Vec<(String, String)> {
        self.set.iter().filter_map(|kv| kv.split_once('=')).map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    /// Check that `runs` (the scenario as run, expanded again) are the sweep the manifest
    /// describes.
    pub fn check(&self, runs: &[Run]) -> Result<(), Error> {
        if fingerprint(runs)? != self.fingerprint {
            return Err(Error::Shards(format!(
                "the scenario recorded with the results no longer expands to the {} runs that were run \
                 (a different rdtp-sim version?)",
                self.runs
            )));
        }
        Ok(())
    }

    /// The same sweep, whole (no shard).
    pub fn whole(&self) -> Self {
        Manifest { shard: None, ..self.clone() }
    }

    /// The scenario file as given when the sweep was run.
    pub fn scenario_path(&self) -> PathBuf {
        PathBuf::from(&self.scenario)
    }
}

/// FNV-1a (64 bits) over every run's id and `--run-one` arguments, as 16 hex digits.
fn fingerprint(runs: &[Run]) -> Result<String, Error> {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |s: &str| {
        for b in s.bytes().chain([0]) {
            h = (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    for r in runs {
        eat(&r.id);
        for a in run_args(&r.scenario, "")? {
            eat(&a);
        }
    }
    Ok(format!("{h:016x}"))
}

/// Make `dst` a copy of the directory tree `src`: files hard-linked where the file system
/// allows it, copied otherwise.
pub fn link_tree(src: &Path, dst: &Path) -> Result<(), Error> {
    let at = |p: &Path, e: std::io::Error| Error::file(p, e);
    fs::create_dir_all(dst).map_err(|e| at(dst, e))?;
    for entry in fs::read_dir(src).map_err(|e| at(src, e))? {
        let entry = entry.map_err(|e| at(src, e))?;
        let (from, to) = (entry.path(), dst.join(entry.file_name()));
        if entry.file_type().map_err(|e| at(&from, e))?.is_dir() {
            link_tree(&from, &to)?;
            continue;
        }
        let _ = fs::remove_file(&to);
        if fs::hard_link(&from, &to).is_err() {
            fs::copy(&from, &to).map_err(|e| at(&from, e))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_partition_the_runs() {
        let s = parse("1/3").unwrap();
        assert_eq!(s.to_string(), "1/3");
        assert_eq!((0..10).filter(|&i| s.has(i)).collect::<Vec<_>>(), [1, 4, 7]);
        let all: Vec<usize> =
            (0..3).flat_map(|i| (0..10).filter(move |&r| Shard { index: i, count: 3 }.has(r))).collect();
        assert_eq!(all.len(), 10);
        for bad in ["3/3", "1", "a/2", "0/0", "-1/2"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn manifests_tell_sweeps_apart() {
        let text = "[scenario]\nduration = 1\n[topology]\nkind = \"dumbbell\"\n[[flow]]\nkind = \"rdtp\"\n\
                    [sweep]\n\"topology.rate\" = [10, 20, 30]\n";
        let sets = vec![("scenario.repeat".to_string(), "2".to_string())];
        let (_, runs) = rdtp_scenario::expand(text, &sets).unwrap();
        let m = Manifest::new(Path::new("s.toml"), &sets, &runs, Some(Shard { index: 0, count: 2 })).unwrap();
        assert_eq!(m.runs, 6);
        assert_eq!(m.sets(), sets);
        m.check(&runs).unwrap();
        let back: Manifest = toml::from_str(&toml::to_string(&m).unwrap()).unwrap();
        assert_eq!(back, m);
        assert_eq!(m.ns3.as_deref(), crate::NS3_VERSION);
        // A sweep.toml written before the ns-3 version was recorded still reads.
        let old: Manifest = toml::from_str(&toml::to_string(&Manifest { ns3: None, ..m.clone() }).unwrap()).unwrap();
        assert_eq!(old.ns3_version(), "unrecorded");
        assert_eq!(m.whole().shard, None);
        // Another override, another sweep.
        let (_, other) = rdtp_scenario::expand(text, &[("scenario.seed".to_string(), "2".to_string())]).unwrap();
        assert!(m.check(&other).is_err());
        let (_, fewer) = rdtp_scenario::expand(text, &[]).unwrap();
        assert!(m.check(&fewer).is_err());
    }
}
