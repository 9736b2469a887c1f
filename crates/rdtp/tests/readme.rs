//! What a newcomer reads stays true and speaks to them: the README's figures gallery points
//! at images and sections that exist, its controller list is `rdtp fetch --cc help`'s, the
//! texts a reader meets (README, docs, crate and test-rig READMEs, scenario files, plot
//! titles, `--help`) use no internal shorthand (the papers by number, issue or slice numbers,
//! paths outside the repository), and the default output directories are git-ignored.

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;
use common::RDTP;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(repo().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// GitHub's anchor for a Markdown heading: lower case, spaces to hyphens, only letters,
/// digits, `-` and `_` kept.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            '-' | '_' => Some(c),
            c if c.is_alphanumeric() => Some(c),
            _ => None,
        })
        .collect()
}

fn anchors(markdown: &str) -> Vec<String> {
    markdown.lines().filter(|l| l.starts_with('#')).map(|l| slug(l.trim_start_matches('#'))).collect()
}

/// Every `prefix…"` or `prefix…)` target in `text`.
fn targets<'a>(text: &'a str, prefix: &str) -> Vec<&'a str> {
    text.match_indices(prefix)
        .map(|(i, _)| {
            let rest = &text[i + prefix.len()..];
            &rest[..rest.find(['"', ')']).unwrap_or(rest.len())]
        })
        .collect()
}

#[test]
fn the_figures_gallery_shows_existing_images_and_links_existing_sections() {
    let readme = read("README.md");
    let images = targets(&readme, "src=\"docs/img/");
    assert!(images.len() >= 15, "one thumbnail per reproduced paper figure, found {}", images.len());
    for img in &images {
        assert!(repo().join("docs/img").join(img).is_file(), "docs/img/{img} is missing");
    }
    let sections = anchors(&read("docs/EXPERIMENTS.md"));
    let links: Vec<&str> = targets(&readme, "href=\"docs/EXPERIMENTS.md#")
        .into_iter()
        .chain(targets(&readme, "(docs/EXPERIMENTS.md#"))
        .collect();
    assert!(links.len() >= images.len());
    for a in links {
        assert!(sections.iter().any(|s| s == a), "docs/EXPERIMENTS.md has no section #{a}");
    }
    // The README's own links to its sections.
    let own = anchors(&readme);
    for a in targets(&readme, "](#") {
        assert!(own.iter().any(|s| s == a), "README.md has no section #{a}");
    }
}

#[test]
fn the_readme_names_every_controller_fetch_offers() {
    let o = Command::new(RDTP).args(["fetch", "--cc", "help"]).output().unwrap();
    assert!(o.status.success());
    let help = String::from_utf8_lossy(&o.stdout);
    // Controller lines start with the name, then two spaces or more.
    let names: Vec<&str> = help
        .lines()
        .filter(|l| l.starts_with(|c: char| c.is_ascii_lowercase()) && l.contains("  "))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert!(names.len() >= 13, "{help}");
    // Every word of the README's code spans (`--cc bbr | bbr-wifi`, `cctcp`, `bbrp:probe_gain=2`).
    let readme = read("README.md");
    let words: Vec<&str> = readme
        .split('`')
        .skip(1)
        .step_by(2)
        .flat_map(|span| span.split(|c: char| c.is_whitespace() || "|:,=".contains(c)))
        .collect();
    for name in names {
        assert!(words.contains(&name), "README.md does not name `{name}`");
    }
}

/// `needle` in `text` (lower case), followed by a digit where `digit` says so.
fn internal_shorthand(text: &str) -> Option<String> {
    let lower = text.to_lowercase();
    for (needle, digit) in
        [("seed 00", false), ("seeds 00", false), ("issue ", true), ("slice ", true), ("../shared", false)]
    {
        for (i, _) in lower.match_indices(needle) {
            let next = lower[i + needle.len()..].chars().next();
            if !digit || next.is_some_and(|c| c.is_ascii_digit()) {
                let line = lower[..i].matches('\n').count() + 1;
                return Some(format!("line {line}: {:?}", text.lines().nth(line - 1).unwrap_or("")));
            }
        }
    }
    None
}

#[test]
fn reader_facing_texts_name_the_papers_by_their_authors_and_no_issue_numbers() {
    let mut files: Vec<String> =
        ["README.md", "experiments/README.md", "experiments/plot.py", "testbed/README.md", "tools/README.md"]
            .map(String::from)
            .to_vec();
    for dir in ["docs", "experiments", "testbed", "crates", "tests"] {
        for e in std::fs::read_dir(repo().join(dir)).unwrap().flatten() {
            let p = e.path();
            let readme = p.join("README.md");
            if readme.is_file() {
                files.push(format!("{dir}/{}/README.md", e.file_name().to_string_lossy()));
            } else if p.extension().is_some_and(|x| x == "md" || x == "toml") {
                files.push(format!("{dir}/{}", e.file_name().to_string_lossy()));
            }
        }
    }
    let mut found = Vec::new();
    for f in &files {
        if let Some(hit) = internal_shorthand(&read(f)) {
            found.push(format!("{f}: {hit}"));
        }
    }
    let commands: &[&[&str]] = &[
        &["serve"],
        &["route"],
        &["fetch"],
        &["ls"],
        &["demo"],
        &["bench", "loopback"],
        &["bench", "router"],
        &["bench", "workers"],
        &["sim"],
        &["testbed"],
        &["wifi", "estimate"],
    ];
    for cmd in commands {
        let o = Command::new(RDTP).args(*cmd).arg("--help").output().unwrap();
        assert!(o.status.success(), "rdtp {cmd:?} --help");
        if let Some(hit) = internal_shorthand(&String::from_utf8_lossy(&o.stdout)) {
            found.push(format!("rdtp {} --help: {hit}", cmd.join(" ")));
        }
    }
    assert!(found.is_empty(), "internal shorthand where readers see it:\n{}", found.join("\n"));
}

#[test]
fn the_default_output_directories_are_git_ignored() {
    let ignore = read(".gitignore");
    for dir in ["rdtp-sim-out/", "rdtp-testbed-out/"] {
        assert!(
            ignore.lines().any(|l| l.trim() == dir),
            "{dir} (where rdtp sim / rdtp testbed write without --out) is not in .gitignore"
        );
    }
}
