//! What a reader sees of routers. Routers started without `--id` name themselves after the
//! port they listen on (`:PORT`), so a fetch through two of them says which one served the
//! bytes, and how far it is: `Served by: router :41235 (2 hops away) 100.0 %` (before, both
//! were `router`). `rdtp ls` through a router says that what it lists is the router's default
//! upstream's catalogue.

use std::process::Command;
use std::time::Duration;

mod common;
use common::{RDTP, Server, content, fetch_to as fetch, served_by};

/// The `:PORT` a router bound to port 0 names itself by.
fn default_id(router: &Server) -> String {
    format!(":{}", router.addr.rsplit_once(':').unwrap().1)
}

#[test]
fn routers_without_an_id_are_named_by_their_port_and_the_summary_says_how_far_each_is() {
    let dir = tempfile::tempdir().unwrap();
    let object = content(600_000, 7);
    std::fs::write(dir.path().join("obj.bin"), &object).unwrap();
    let server = Server::start(dir.path(), &[]);
    // receiver → near → far → server, neither router given an id.
    let far = Server::route(&["--upstream", &server.addr]);
    let near = Server::route(&["--upstream", &far.addr]);
    let (near_id, far_id) = (default_id(&near), default_id(&far));
    assert_ne!(near_id, far_id);
    assert!(near.line.contains(&format!("(id {near_id},")), "{}", near.line);
    assert!(far.line.contains(&format!("(id {far_id},")), "{}", far.line);

    // Straight to the far router: it caches the object (once its blocks are verified).
    let out = dir.path().join("out");
    let (code, summary) = fetch(&far.addr, "obj.bin", &out);
    assert_eq!(code, 0, "{summary}");
    assert!(served_by(&summary).starts_with("origin "), "{summary}");
    std::thread::sleep(Duration::from_millis(300));

    // Through both: everything from the far router's store, two hops away.
    let (code, summary) = fetch(&near.addr, "obj.bin", &out);
    assert_eq!(code, 0, "{summary}");
    assert_eq!(std::fs::read(&out).unwrap(), object);
    assert_eq!(served_by(&summary), format!("router {far_id} (2 hops away) 100.0 %"), "{summary}");
    std::thread::sleep(Duration::from_millis(300));

    // Again: now the near router has it, one hop away.
    let (code, summary) = fetch(&near.addr, "obj.bin", &out);
    assert_eq!(code, 0, "{summary}");
    assert_eq!(served_by(&summary), format!("router {near_id} (1 hop away) 100.0 %"), "{summary}");
}

#[test]
fn ls_through_a_router_says_it_lists_the_default_upstreams_catalogue() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.bin"), content(1000, 1)).unwrap();
    let server = Server::start(dir.path(), &[]);
    let router = Server::route(&["--upstream", &server.addr]);
    let o = Command::new(RDTP).args(["ls", &router.addr]).output().unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    assert!(stdout.contains("a.bin"), "{stdout}");
    assert!(
        stderr.contains(&format!("rdtp ls: 1 object from {}", router.addr))
            && stderr.contains("through a router: the catalogue of its default upstream only"),
        "{stderr}"
    );
    let help = Command::new(RDTP).args(["ls", "--help"]).output().unwrap();
    assert!(String::from_utf8_lossy(&help.stdout).contains("Through a router"), "ls --help says what a router lists");
}
