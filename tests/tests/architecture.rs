//! The server in layers, read from the sources (the map: `api/src/lib.rs`,
//! the README's "Architecture"):
//!
//! - in each crate (`domain`, `store`, `api`), no top module imports its
//!   way back to itself, directly or around a loop, test code included
//!   (so that, for one, renaming a view never changes how stored logs are
//!   read: the stored format owns its names);
//! - in `api`, a module imports only modules of its own layer or of the
//!   layers below it, as the table of layers in `api/src/lib.rs` says: the
//!   test reads that table, so the map and the code cannot drift apart;
//!   below HTTP nothing names actix-web (a service answers a
//!   `ServiceError`, which HTTP maps once); and no SQL is written outside
//!   the store;
//! - TLS is rustls alone: no OpenSSL, one crypto provider.
//!
//! The crates' own order (`domain` and `ledger` under `store` under `api`) is Cargo's:
//! a dependency cannot depend back on what depends on it.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The top modules of `src`, each with the top modules its code names
/// (its tests' code too) and the text of its files without comments.
fn modules(src: &Path) -> BTreeMap<String, (BTreeSet<String>, String)> {
    let mut modules: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
    for entry in fs::read_dir(src).expect("src/") {
        let path = entry.expect("an entry").path();
        let name = path.file_stem().and_then(|s| s.to_str()).expect("a name");
        if name == "lib" || name == "main" {
            continue;
        }
        let files = modules.entry(name.to_owned()).or_default();
        if path.is_dir() {
            files.extend(sources(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    let names: BTreeSet<String> = modules.keys().cloned().collect();
    modules
        .iter()
        .map(|(module, files)| {
            let mut named = BTreeSet::new();
            let mut code = String::new();
            for file in files {
                let text = without_comments(&fs::read_to_string(file).expect("a source"));
                // In a top module's own file, `super::` is the crate.
                let top = file.parent() == Some(src)
                    || (file.parent() == Some(&src.join(module)) && file.ends_with("mod.rs"));
                let text = if top {
                    text.replace("super::", "crate::")
                } else {
                    text
                };
                named.extend(crate_paths(&text));
                code.push_str(&text);
            }
            named.retain(|n| names.contains(n) && n != module);
            (module.clone(), (named, code))
        })
        .collect()
}

/// The import graph of `src`'s top modules.
fn imports(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    modules(src)
        .into_iter()
        .map(|(module, (named, _))| (module, named))
        .collect()
}

/// Every `.rs` file below `dir`.
fn sources(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in fs::read_dir(dir).expect("a folder") {
        let path = entry.expect("an entry").path();
        if path.is_dir() {
            files.extend(sources(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    files
}

/// A source without its comments (docs name modules in prose).
fn without_comments(text: &str) -> String {
    text.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The first segment of every path from `crate::`, groups included
/// (`crate::{a::X, b}` names `a` and `b`).
fn crate_paths(code: &str) -> Vec<String> {
    let mut named = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            named.extend(group[..end].split(',').filter_map(|item| {
                let item = item.trim();
                (!item.is_empty()).then(|| identifier(item))
            }));
        } else {
            named.push(identifier(rest));
        }
    }
    named
}

fn identifier(text: &str) -> String {
    text.chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect()
}

/// The loops of `graph`: its strongly connected components of more than
/// one module (Tarjan's algorithm).
fn loops(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct Walk<'g> {
        graph: &'g BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        loops: Vec<Vec<String>>,
    }
    impl<'g> Walk<'g> {
        fn visit(&mut self, v: &'g str) {
            let i = self.index.len();
            self.index.insert(v, i);
            self.low.insert(v, i);
            self.stack.push(v);
            for w in &self.graph[v] {
                let w = w.as_str();
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let low = self.low[v].min(self.low[w]);
                    self.low.insert(v, low);
                } else if self.stack.contains(&w) {
                    let low = self.low[v].min(self.index[w]);
                    self.low.insert(v, low);
                }
            }
            if self.low[v] == self.index[v] {
                let at = self
                    .stack
                    .iter()
                    .rposition(|m| *m == v)
                    .expect("on the stack");
                let component: Vec<String> = self.stack.drain(at..).map(str::to_owned).collect();
                if component.len() > 1 {
                    self.loops.push(component);
                }
            }
        }
    }
    let mut walk = Walk {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        loops: Vec::new(),
    };
    for v in graph.keys() {
        if !walk.index.contains_key(v.as_str()) {
            walk.visit(v);
        }
    }
    walk.loops
}

/// `src` of the workspace's crate `name`.
fn src_of(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(name)
        .join("src")
}

#[test]
fn no_module_of_any_crate_imports_its_way_back_to_itself() {
    for (name, some_import) in [
        ("domain", ("table", "event")),
        ("store", ("outbox", "feed")),
        ("api", ("table_service", "log")),
    ] {
        let graph = imports(&src_of(name));
        assert!(graph.len() > 10, "{name}: {graph:?}");
        let (from, to) = some_import;
        assert!(graph[from].contains(to), "{name}: the scan reads imports");
        assert_eq!(
            loops(&graph),
            Vec::<Vec<String>>::new(),
            "{name}: {graph:#?}"
        );
    }
}

/// The layers of `api/src/lib.rs`'s table, top first: each row's
/// modules, the `[`name`]` links of its second column.
fn layers(lib: &str) -> Vec<(String, Vec<String>)> {
    lib.lines()
        .filter_map(|l| l.strip_prefix("//! | "))
        .filter_map(|row| {
            let cells: Vec<&str> = row.split(" | ").collect();
            let [layer, modules, ..] = cells[..] else {
                return None;
            };
            let names: Vec<String> = modules.split("[`").skip(1).map(identifier).collect();
            (!names.is_empty() && layer.starts_with("**"))
                .then(|| (layer.trim_matches('*').to_owned(), names))
        })
        .collect()
}

#[test]
fn api_modules_import_only_their_layer_and_those_below_as_its_map_says() {
    let src = src_of("api");
    let modules = modules(&src);
    let lib = fs::read_to_string(src.join("lib.rs")).expect("lib.rs");
    let layers = layers(&lib);
    let names: Vec<&str> = layers.iter().map(|(l, _)| l.as_str()).collect();
    assert_eq!(
        names,
        ["HTTP", "service", "log", "leaves"],
        "the map's layers"
    );
    let depth: BTreeMap<&str, usize> = layers
        .iter()
        .enumerate()
        .flat_map(|(i, (_, ms))| ms.iter().map(move |m| (m.as_str(), i)))
        .collect();
    let unplaced: Vec<&String> = modules
        .keys()
        .filter(|m| !depth.contains_key(m.as_str()))
        .collect();
    assert!(
        unplaced.is_empty(),
        "modules the map places in no layer: {unplaced:?}"
    );
    let mut upward = Vec::new();
    for (module, (named, code)) in &modules {
        let at = depth[module.as_str()];
        upward.extend(named.iter().filter(|n| depth[n.as_str()] < at).map(|n| {
            format!(
                "{module} ({}) imports {n} ({})",
                names[at],
                names[depth[n.as_str()]]
            )
        }));
        if at > 0 && code.contains("actix_web") {
            upward.push(format!("{module} ({}) names actix_web", names[at]));
        }
        if code.contains("sqlx::query") {
            upward.push(format!("{module} holds SQL of its own (the store's)"));
        }
    }
    assert!(upward.is_empty(), "{upward:#?}");
}

/// The layers of the README's table ("The code: layers, and the path of a
/// move"): each row's layer and the `` `name` ``s of its second column.
fn readme_layers(readme: &str) -> Vec<(String, Vec<String>)> {
    let table = readme
        .split("| layer | modules | never imports |")
        .nth(1)
        .and_then(|rest| rest.split("\n\n").next())
        .expect("the README's table of layers");
    table
        .lines()
        .skip(2)
        .filter_map(|row| {
            let cells: Vec<&str> = row.trim_start_matches("| ").split(" | ").collect();
            let [layer, modules, ..] = cells[..] else {
                return None;
            };
            let names = modules
                .split(", ")
                .filter_map(|m| m.strip_prefix('`').map(identifier))
                .collect();
            Some((layer.to_owned(), names))
        })
        .collect()
}

#[test]
fn the_readme_draws_the_layers_of_the_map() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let lib = fs::read_to_string(root.join("api/src/lib.rs")).expect("lib.rs");
    let readme = fs::read_to_string(root.join("README.md")).expect("README.md");
    assert_eq!(readme_layers(&readme), layers(&lib));
}

#[test]
fn the_layers_are_read_from_the_maps_rows() {
    let map = "//! | layer | modules | never |\n\
               //! |---|---|---|\n\
               //! | **HTTP** | [`routes`], [`sse`] | - |\n\
               //! | **log** | [`log`] (one protocol) | HTTP |\n\
               //! | `store` | the SQL | [`log`] |";
    assert_eq!(
        layers(map),
        [
            (
                "HTTP".to_owned(),
                vec!["routes".to_owned(), "sse".to_owned()]
            ),
            ("log".to_owned(), vec!["log".to_owned()]),
        ]
    );
}

#[test]
fn the_scan_finds_a_loop_where_there_is_one() {
    let graph: BTreeMap<String, BTreeSet<String>> = [
        ("event", vec!["view"]),
        ("view", vec!["game"]),
        ("game", vec!["event", "rules"]),
        ("rules", vec![]),
    ]
    .into_iter()
    .map(|(m, to)| (m.to_owned(), to.into_iter().map(str::to_owned).collect()))
    .collect();
    let mut found = loops(&graph);
    found.iter_mut().for_each(|l| l.sort());
    assert_eq!(found, vec![vec!["event", "game", "view"]]);
    let paths = crate_paths("use crate::{view::PendingKind, game}; crate::rules::X");
    assert_eq!(paths, ["view", "game", "rules"]);
}

/// TLS is rustls everywhere the server is a client (PostgreSQL, webhooks,
/// push): no OpenSSL to install, patch or link, and one crypto provider
/// (ring) rather than two. The lock file holds every crate of every build.
#[test]
fn no_openssl_nor_a_second_crypto_provider_is_linked() {
    let lock = fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.lock"))
        .expect("Cargo.lock");
    let packages: BTreeSet<&str> = lock
        .lines()
        .filter_map(|line| line.strip_prefix("name = \""))
        .map(|rest| rest.trim_end_matches('"'))
        .collect();
    assert!(packages.contains("rustls") && packages.contains("ring"));
    for banned in [
        "openssl",
        "openssl-sys",
        "native-tls",
        "aws-lc-rs",
        "aws-lc-sys",
    ] {
        assert!(!packages.contains(banned), "{banned} is in Cargo.lock");
    }
}
