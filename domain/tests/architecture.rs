//! The domain's modules in layers: no top module imports its way back to
//! itself, directly or around a loop (so that, for one, renaming a view
//! never changes how stored logs are read: the stored format owns its
//! names). Read from the sources: every `crate::<module>` a module's code
//! names, its tests left out (a test may reach anywhere).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The top modules of `src`, each with the top modules its code names.
fn imports(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
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
            for file in files.iter().filter(|f| !is_test(f)) {
                let text = fs::read_to_string(file).expect("a source");
                named.extend(crate_paths(without_tests(&text)));
            }
            named.retain(|n| names.contains(n) && n != module);
            (module.clone(), named)
        })
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

/// A test module's file (`tests.rs`, `*_tests.rs`, or below a `*_tests`
/// or `tests` folder).
fn is_test(file: &Path) -> bool {
    file.components().any(|c| {
        let c = c.as_os_str().to_string_lossy();
        let stem = c.trim_end_matches(".rs");
        stem == "tests" || stem.ends_with("_tests")
    })
}

/// The code before a file's `#[cfg(test)]` module, without comments.
fn without_tests(text: &str) -> String {
    let code = text.split("#[cfg(test)]").next().unwrap_or("");
    code.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The first segment of every path from `crate::`, groups included
/// (`crate::{a::X, b}` names `a` and `b`).
fn crate_paths(code: String) -> Vec<String> {
    let mut named = Vec::new();
    let mut rest = code.as_str();
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

#[test]
fn no_module_of_the_domain_imports_its_way_back_to_itself() {
    let graph = imports(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    assert!(graph.len() > 10, "{graph:?}");
    assert!(graph["table"].contains("event"), "the scan reads imports");
    assert_eq!(loops(&graph), Vec::<Vec<String>>::new(), "{graph:#?}");
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
    let paths = crate_paths("use crate::{view::PendingKind, game}; crate::rules::X".into());
    assert_eq!(paths, ["view", "game", "rules"]);
}
